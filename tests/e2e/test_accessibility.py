"""axe-core (WCAG 2.1 A and AA) on every page, in normal and presenter mode, after a step.

axe-core comes from npm (``make test`` installs it from package.json); it is injected into the page
and run there. A violation counts when one of its nodes is the app's own element, not Streamlit's
frame around it (its toolbar, its own navigation widgets), which the app cannot change.
"""
import json
from pathlib import Path

import pytest

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
PAGES = ["", "start", "tokens", "attention", "sampling", "cost", "inside", "serving", "glossary"]
# Streamlit's own frame: parts of the page no app code draws.
STREAMLIT_FRAME = ("[data-testid=\"stToolbar\"]", "[data-testid=\"stHeader\"]", "[data-testid=\"stDecoration\"]",
                   "[data-testid=\"stStatusWidget\"]", "[data-testid=\"stMainMenu\"]")


def _settled(page) -> None:
    """The script has finished and every element is drawn (no loading placeholder left to check)."""
    page.wait_for_function(
        "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
        " && document.querySelectorAll('[data-testid=stSkeleton]').length === 0")


def _axe(page) -> list[dict]:
    """Run axe on the page as it is: every violation with the nodes it found."""
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


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: run `npm ci` (make test does it)")
@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_no_wcag_violation_from_the_apps_own_elements(page, app_url, present):
    found = {}
    query = "?prompt=The+cat+sat&steps=1" + ("&present=1" if present else "")  # every page after one step
    for path in PAGES:
        page.goto(f"{app_url}/{path}{query}")
        if present:  # presenter mode reloads once into the dark theme
            page.wait_for_url("**embed_options=dark_theme**")
        page.locator("h1").first.wait_for()
        _settled(page)
        page.screenshot(path=str(ARTIFACTS / f"page-{'presenter' if present else 'normal'}-{path or 'step'}.png"))
        own = _own(_axe(page), page)
        if own:
            found[path or "step"] = own
    (ARTIFACTS / f"axe-{'presenter' if present else 'normal'}.json").write_text(json.dumps(found, indent=1))
    assert found == {}, json.dumps(found, indent=1)[:4000]
