"""A teacher's first lesson: the 45-minute path in presenter mode on a 1280×720 projector, in one tab.

At each stop: the state its note assumes (steps taken, the open tab, captured rows), Next token, the token
strip and the distribution chart inside the first screen, and no text cut or spilling out of its box.
A screenshot of each stop goes to /tmp/shots-lesson1/ (or $AUTOREG_SHOTS).
"""
import os
from pathlib import Path

import pytest

from autoreg_ui import lesson_path_text
from autoreg_ui.lessons.attention import keys as attention_keys
from autoreg_ui.lessons.sampling import keys as sampling_keys
from autoreg_ui.lessons.start import text as start_text
from autoreg_ui.predict_text import TITLE as PREDICT_TITLE

from .test_accessibility import AXE, _axe, _own

pytestmark = pytest.mark.e2e

SHOTS = Path(os.environ.get("AUTOREG_SHOTS", "/tmp/shots-lesson1"))
WIDTH, HEIGHT = 1280, 720
MAIN = "[data-testid=stMain]"

# Text that is cut or spills out of its box: wider content than the box on an element that holds text, or a
# chart title wider than its chart. Code blocks and tables scroll on purpose and are left out.
OVERFLOW_JS = """
() => {
  const out = [];
  const main = document.querySelector('[data-testid=stMain]');
  for (const el of main.querySelectorAll('p, h1, h2, h3, h4, label, li, button, [data-testid=stMetricValue]')) {
    if (el.closest('pre, [data-testid=stDataFrame], [data-testid=stTable], .stCode')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (el.scrollWidth > el.clientWidth + 2) out.push(el.tagName + ': ' + el.innerText.slice(0, 60));
  }
  for (const svg of main.querySelectorAll('.main-svg')) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('.gtitle')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 1 || r.right > box.right + 1))
        out.push('chart title: ' + t.textContent.slice(0, 60));
    }
  }
  return out;
}
"""


def _settled(page) -> None:
    page.wait_for_function(
        "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
        " && document.querySelectorAll('[data-testid=stSkeleton]').length === 0", timeout=180_000)
    page.wait_for_timeout(600)


def _click(page, locator) -> None:
    locator.click()
    page.wait_for_timeout(500)
    _settled(page)


def _bottom(page, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    return box["y"] + box["height"]


def _on_first_screen(page, *selectors: str) -> None:
    page.evaluate("window.scrollTo(0, 0)")
    for selector in selectors:
        bottom = _bottom(page, selector)
        assert bottom <= HEIGHT, f"{selector} ends at y = {bottom:.0f}, below the first screen ({HEIGHT} px)"


def _shot(page, name: str) -> None:
    """A screenshot with the mouse out of the way, so no tooltip covers the page."""
    page.mouse.move(0, 700)
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / name))


def _no_overflow(page, where: str) -> None:
    cut = page.evaluate(OVERFLOW_JS)
    assert cut == [], f"{where}: text cut or spilling out: {cut}"


def _no_axe_violation(page, where: str) -> None:
    """axe (WCAG 2.1 A/AA) on the page as it is, the path bar and the predict box included."""
    if AXE.exists():
        own = _own(_axe(page), page)
        assert own == [], f"{where}: {own}"


def _stop(page, number: int, title: str) -> None:
    page.get_by_text(f"stop {number} of 7:").first.wait_for()
    assert page.locator(".st-key-lesson_path_bar").first.inner_text().count(title) == 1


NEXT_TOKEN = f"{MAIN} .st-key-teacher_row_step button:has-text('Next token')"


def test_the_45_minute_path_in_presenter_mode_in_one_tab(browser, app_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = ctx.new_page()
    page.set_default_timeout(180_000)
    path = start_text.SHORT
    try:
        page.goto(f"{app_url}/?present=1")  # the app's root opens Start here
        page.wait_for_url("**/start?**embed_options=dark_theme**")
        _settled(page)
        _click(page, page.get_by_role("button", name=start_text.TEACH_PATH).first)

        # stop 1: the opening, on the Start page
        _stop(page, 1, path[0].title)
        assert page.get_by_role("button", name=lesson_path_text.PREVIOUS).is_disabled()
        _shot(page, "stop-1-opening.png")
        _no_overflow(page, "opening")
        _no_axe_violation(page, "the opening, with the path bar")
        opened = page.evaluate("() => performance.getEntriesByType('navigation').length && performance.timeOrigin")

        # stop 2: the loop, no step taken yet
        _click(page, page.get_by_role("button", name=lesson_path_text.NEXT))
        _stop(page, 2, path[1].title)
        assert "/step?" in page.url and "present=1" in page.url
        assert page.evaluate("() => performance.timeOrigin") == opened, "the stop opened a new page load"
        metric = page.locator(f"{MAIN} [data-testid=stMetric]", has_text="Generated tokens")
        assert metric.locator("[data-testid=stMetricValue]").inner_text().strip() == "0"
        _shot(page, "stop-2-loop-before.png")
        _on_first_screen(page, NEXT_TOKEN, f"{MAIN} .tokstrip")
        # predict, then check: it stays open with its verdict, and asks again after a step
        box = page.locator(f"{MAIN} [data-testid=stExpander]", has_text=PREDICT_TITLE).first
        box.locator("summary").click()
        page.wait_for_timeout(300)
        verdict = box.locator("[data-testid=stMarkdownContainer]", has_text="Right.").or_(
            box.locator("[data-testid=stMarkdownContainer]", has_text="Not quite."))
        _click(page, box.locator("[data-testid=stRadio]").first.locator("[data-testid=stRadioOption]").first)
        assert box.locator("details").get_attribute("open") is not None, "the box closed after an answer"
        first_verdict = verdict.first.inner_text()
        _no_axe_violation(page, "the loop, predict box open with its verdict")
        _click(page, page.locator(NEXT_TOKEN).first)
        assert metric.locator("[data-testid=stMetricValue]").inner_text().strip() == "1"
        assert box.locator("details").get_attribute("open") is not None, "the box closed after a step"
        box.get_by_text("These questions are about step 1;").wait_for()
        again = box.locator("[data-testid=stRadio]").first
        assert again.locator("input:checked").count() == 0, "the new step's question is not asked afresh"
        assert verdict.count() == 0
        _click(page, again.locator("[data-testid=stRadioOption]").first)
        assert verdict.first.inner_text() != first_verdict, "the answer did not follow the step"
        _click(page, box.locator("summary"))  # the teacher closes it to show the step
        _shot(page, "stop-2-loop-after-one-step.png")
        _on_first_screen(page, NEXT_TOKEN, f"{MAIN} .tokstrip", f"{MAIN} [data-testid=stPlotlyChart]")
        _no_overflow(page, "the loop")

        # stop 3: tokens
        _click(page, page.get_by_role("button", name=lesson_path_text.NEXT))
        _stop(page, 3, path[2].title)
        assert "/tokens?" in page.url and "present=1" in page.url
        _shot(page, "stop-3-tokens.png")
        _no_overflow(page, "tokens")

        # stop 4: sampling, the sentence in view
        _click(page, page.get_by_role("button", name=lesson_path_text.NEXT))
        _stop(page, 4, path[3].title)
        assert "/sampling?" in page.url
        page.get_by_text("Once upon a time, a small robot").first.wait_for(state="visible")
        _shot(page, "stop-4-sampling.png")
        # one step on one screen: Next token, the sentence being continued and the distribution chart
        _on_first_screen(page, f"{MAIN} button:has-text('Next token')",
                         f"{MAIN} [data-testid=stCode]:has-text('Once upon a time, a small robot')",
                         f"{MAIN} .st-key-{sampling_keys.LAB_PIPELINE_CHART} [data-testid=stPlotlyChart]")
        _no_overflow(page, "sampling")

        # stop 5: attention, on the causal triangle, every row captured
        _click(page, page.get_by_role("button", name=lesson_path_text.NEXT))
        _stop(page, 5, path[4].title)
        assert "/attention?" in page.url
        selected = page.locator(f"{MAIN} [role=tab][aria-selected=true]").inner_text()
        assert "Causal triangle" in selected
        assert page.get_by_text("were not captured").count() == 0
        page.locator(f"{MAIN} [data-testid=stPlotlyChart]").first.wait_for()
        _shot(page, "stop-5-attention.png")
        _on_first_screen(page, f"{MAIN} button:has-text('Next token')",
                         f"{MAIN} .st-key-{attention_keys.ATT_TRIANGLE_CHART} [data-testid=stPlotlyChart]")
        _no_overflow(page, "attention")

        # stop 6: the race
        _click(page, page.get_by_role("button", name=lesson_path_text.NEXT))
        _stop(page, 6, path[5].title)
        assert "/cost?" in page.url
        _shot(page, "stop-6-race.png")
        _no_overflow(page, "the race")

        # stop 7: the wrap-up, back on Start here; then back to stop 2 as it was left
        _click(page, page.get_by_role("button", name=lesson_path_text.NEXT))
        _stop(page, 7, path[6].title)
        assert page.get_by_role("button", name=lesson_path_text.NEXT).is_disabled()
        _shot(page, "stop-7-wrap-up.png")
        _no_overflow(page, "wrap-up")
        assert page.evaluate("() => performance.timeOrigin") == opened and len(ctx.pages) == 1
    finally:
        ctx.close()
