"""axe-core (WCAG 2.1 A and AA) on every page, in normal and presenter mode, after a step.

axe-core comes from npm (``make test`` installs it from package.json); it is injected into the page
and run there. A violation counts when one of its nodes is the app's own element, not Streamlit's
frame around it (its toolbar, its own navigation widgets), which the app cannot change.

Not only what a page shows first: every tab of a page with tabs, the "Predict, then check" box, the
"Terms" popover, and on the step page one "Numbers as a table" switch are opened and checked too, each in
the state a learner would see it; on the hood and tricks pages, each of their buttons is pressed and the view it
leaves is checked (PRESSED).
"""
import json
from pathlib import Path

import pytest

from autoreg_ui.charts_text import TABLE_TOGGLE
from autoreg_ui.glossary_text import TERMS_HERE
from autoreg_ui.lessons.hood import text as hood_text
from autoreg_ui.lessons.tricks import text as tricks_text
from autoreg_ui.predict_text import TITLE as PREDICT_TITLE

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# one line per page ("" is the root, which opens the step page)
PAGES = [
    "",
    "start",
    "tokens",
    "attention",
    "sampling",
    "cost",
    "inside",
    "serving",
    "glossary",
    "class",  # the join form here; a teacher's and a student's class are checked in test_class_mode
    "hood",
    "tricks",
]
TABLE_SWITCH_ON = {""}  # pages where one "Numbers as a table" switch is turned on and checked
# pages that draw something only for a step taken on them (the attention strip: a replayed step has no captured row)
STEP_HERE = {"attention": ".attstrip"}
# Buttons pressed on a page, one after another, each checked in the state it leaves (the newer lessons' views): the tab
# to open first (None: no tab), the button's label, and what its result draws (waited for before axe runs).
PRESSED = {
    "tricks": [(None, tricks_text.SPEC_RUN, ".st-key-tricks_spec_bars"),
               (None, tricks_text.PREFIX_RUN, ".st-key-tricks_prefix_fig"),
               (None, tricks_text.GRAMMAR_RUN, ".st-key-tricks_grammar_fig")],
    "hood": [(hood_text.LOSS, hood_text.LOSS_RUN, ".st-key-hood_loss_fig"),
             (hood_text.POSITIONS, hood_text.KEY_RUN, ".st-key-hood_key_fig"),
             (hood_text.POSITIONS, hood_text.SHIFT_RUN, None),
             (hood_text.POSITIONS, hood_text.PAD_RUN, None),
             (hood_text.DETERMINISM, hood_text.BATCH_RUN, ".st-key-hood_batch_fig"),
             (hood_text.DETERMINISM, hood_text.SEARCH_RUN, None)],
}
# Streamlit's own frame: parts of the page no app code draws.
STREAMLIT_FRAME = ("[data-testid=\"stToolbar\"]", "[data-testid=\"stHeader\"]", "[data-testid=\"stDecoration\"]",
                   "[data-testid=\"stStatusWidget\"]", "[data-testid=\"stMainMenu\"]")


def _settled(page) -> None:
    """The script has finished and every element is drawn (no loading placeholder left to check)."""
    page.wait_for_function(
        "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
        " && document.querySelectorAll('[data-testid=stSkeleton]').length === 0")


def _after_click(page) -> None:
    """A click that reruns the script: give the rerun a moment to start, then wait until it is drawn."""
    page.wait_for_timeout(400)
    _settled(page)


def _axe(page) -> list[dict]:
    """Run axe on the page as it is: every violation with the nodes it found."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS)
    return result["violations"]


def _own(violations: list[dict], page) -> list[dict]:
    """Keep the nodes that are not inside Streamlit's frame."""
    out = []
    for v in violations:
        nodes = []
        for node in v["nodes"]:
            selector = node["target"][0] if node["target"] else ""
            inside_frame = page.evaluate(
                "([sel, frame]) => { const el = document.querySelector(sel);"
                " return !!el && frame.some(f => el.closest(f)); }", [selector, list(STREAMLIT_FRAME)])
            if not inside_frame:
                nodes.append({"target": node["target"], "summary": node.get("failureSummary", "")[:300]})
        if nodes:
            out.append({"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": nodes})
    return out


def _states(page, path: str):
    """Open, one after another, what a learner can open on this page; yield a name for each state."""
    if path in STEP_HERE:
        page.locator("[data-testid=stMain] button", has_text="Next token").first.click()
        _after_click(page)
        page.locator(STEP_HERE[path]).first.wait_for()
    yield "first view"
    tabs = page.locator("[data-testid=stMain] [role=tab]")
    labels = [tabs.nth(i).inner_text().strip() for i in range(tabs.count())]
    for i, label in enumerate(labels[1:], 1):
        tabs.nth(i).click()
        _after_click(page)
        yield f"tab {label}"
    predict = page.locator("[data-testid=stExpander] summary", has_text=PREDICT_TITLE)
    if predict.count():
        predict.first.click()
        _after_click(page)  # opening it reruns the page: its questions are drawn only while it is open
        yield "predict, then check (open)"
    terms = page.get_by_role("button", name=TERMS_HERE)
    if terms.count():
        terms.first.click()
        page.locator("[data-testid=stPopoverBody]").first.wait_for()
        yield "terms on this page (open)"
        page.keyboard.press("Escape")
    if path in PRESSED:
        page.set_default_timeout(300_000)  # measurements on the embedded model, on a machine others share
    for tab, label, drawn in PRESSED.get(path, []):
        if tab is not None:
            page.locator("[data-testid=stMain] [role=tab]", has_text=tab).first.click()
            _after_click(page)
        before = page.locator("[data-testid=stMain] [data-testid=stMarkdownContainer]").count()
        page.locator("[data-testid=stMain] button", has_text=label).first.click()
        _after_click(page)
        if drawn is not None:
            page.locator(drawn).first.wait_for()
        else:  # a result that is only sentences: more of them than before the click
            page.wait_for_function("n => document.querySelectorAll("
                                   "'[data-testid=stMain] [data-testid=stMarkdownContainer]').length > n", arg=before)
        yield f"after {label}"
    if path in TABLE_SWITCH_ON:
        if labels:  # back to the first view, which draws a chart
            tabs.nth(0).click()
            _after_click(page)
        page.locator("[data-testid=stMain] label", has_text=TABLE_TOGGLE).first.click()
        _after_click(page)
        page.locator("[data-testid=stMain] [data-testid=stDataFrame]").first.wait_for()
        yield "numbers as a table (on)"


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: run `npm ci` (make test does it)")
@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_no_wcag_violation_from_the_apps_own_elements(page, app_url, present):
    found, checked = {}, []
    mode = "presenter" if present else "normal"
    query = "?prompt=The+cat+sat&steps=1" + ("&present=1" if present else "")  # every page after one step
    for path in PAGES:
        page.goto(f"{app_url}/{path}{query}")
        if present:  # presenter mode reloads once into the dark theme
            page.wait_for_url("**embed_options=dark_theme**")
        page.locator("h1").first.wait_for()
        _settled(page)
        page.screenshot(path=str(ARTIFACTS / f"page-{mode}-{path or 'step'}.png"))
        for state in _states(page, path):
            where = f"{path or 'step'} · {state}"
            checked.append(where)
            own = _own(_axe(page), page)
            if own:
                found[where] = own
    (ARTIFACTS / f"axe-{mode}.json").write_text(json.dumps({"checked": checked, "violations": found}, indent=1))
    assert any("· tab " in c for c in checked) and any("terms on this page" in c for c in checked), checked
    assert any("numbers as a table" in c for c in checked) and any("predict, then check" in c for c in checked)
    assert "attention · first view" in checked
    assert [c for c in checked if " · after " in c] == [f"{p} · after {label}" for p in PAGES if p in PRESSED
                                                      for _, label, _ in PRESSED[p]]
    assert found == {}, json.dumps(found, indent=1)[:4000]
