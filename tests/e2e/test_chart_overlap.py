"""Every plotly chart the app draws, on every page and in every tab, in normal mode (1280×800) and presenter mode
(1280×720): no title, legend, axis title or tick label drawn over another kind, and none cut by the chart's edge.

One server, one browser, the pages in a loop (the page registry's list, so a new page is checked too). Each page
opens with a two-step text (its link) and each of its tabs is opened in turn; a chart is read where it is drawn,
through the boxes the browser gives its pieces (getBoundingClientRect).
"""
import pytest

from .test_presenter_fit import PAGES, QUERY, _settled

pytestmark = pytest.mark.e2e

NORMAL, PROJECTOR = (1280, 800), (1280, 720)

# Per chart: its key (the Streamlit container's st-key- class) and the boxes of its pieces, by kind.
CHART_BOXES_JS = """
() => [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')].map(chart => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const shown = el => { const r = el.getBoundingClientRect(); return r.width > 0.5 && r.height > 0.5
                        && (el.textContent || '').trim() !== '' || el.matches('.legend'); };
  const of = sel => [...chart.querySelectorAll(sel)].filter(shown).map(el => ({text: (el.textContent || '').trim()
                     .slice(0, 40), box: box(el)}));
  const keyed = chart.closest('[class*="st-key-"]');
  return {
    key: keyed ? [...keyed.classList].find(c => c.startsWith('st-key-')) : '?',
    svg: box(chart.querySelector('.main-svg')),
    title: of('.infolayer .gtitle'),
    legend: of('.infolayer .legend .bg'),
    axis_title: of('.infolayer text[class$="title"]:not(.gtitle)'),
    tick: of('.xaxislayer-above text, .yaxislayer-above text'),
  };
})
"""
KINDS = ("title", "legend", "axis_title", "tick")
SLACK = 1.0  # px: boxes that only touch do not overlap


def _overlap(a, b) -> bool:
    return (min(a[2], b[2]) - max(a[0], b[0]) > SLACK) and (min(a[3], b[3]) - max(a[1], b[1]) > SLACK)


def _inside(inner, outer) -> bool:
    return (inner[0] >= outer[0] - SLACK and inner[1] >= outer[1] - SLACK and inner[2] <= outer[2] + SLACK
            and inner[3] <= outer[3] + SLACK)


def chart_problems(chart: dict) -> list[str]:
    """Every pair of pieces of different kinds that overlap, and every piece outside the chart's own box."""
    out = []
    for i, kind in enumerate(KINDS):
        for piece in chart[kind]:
            if not _inside(piece["box"], chart["svg"]):
                out.append(f"{chart['key']}: {kind} {piece['text']!r} cut by the chart's edge")
            for other in KINDS[i + 1:]:
                for against in chart[other]:
                    if _overlap(piece["box"], against["box"]):
                        out.append(f"{chart['key']}: {kind} {piece['text']!r} over {other} {against['text']!r}")
    return out


def test_the_checks_see_an_overlap_and_a_cut():
    svg = [0, 0, 400, 300]
    clear = dict(key="k", svg=svg, title=[dict(text="t", box=[5, 5, 100, 25])],
                 legend=[dict(text="", box=[5, 30, 200, 50])], axis_title=[],
                 tick=[dict(text="a", box=[50, 280, 60, 299])])
    assert chart_problems(clear) == []
    over = dict(clear, legend=[dict(text="", box=[5, 20, 200, 50])])
    assert chart_problems(over) == ["k: title 't' over legend ''"]
    cut = dict(clear, tick=[dict(text="a", box=[50, 290, 60, 310])])
    assert chart_problems(cut) == ["k: tick 'a' cut by the chart's edge"]


def _charts_here(page) -> list[dict]:
    page.wait_for_timeout(600)  # plotly lays a chart out after Streamlit has drawn its box
    return page.evaluate(CHART_BOXES_JS)


@pytest.mark.parametrize("size,present", [(NORMAL, False), (PROJECTOR, True)], ids=["normal", "presenter"])
def test_no_chart_draws_over_itself(browser, app_url, size, present):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.set_default_timeout(180_000)
    problems, seen = [], 0
    try:
        for path in PAGES:
            page.goto(f"{app_url}/{path}{QUERY}" + ("&present=1" if present else ""))
            if present:
                page.wait_for_url("**embed_options=dark_theme**")
            page.locator("h1").first.wait_for()
            _settled(page)
            charts = _charts_here(page)
            tabs = page.locator("[data-testid=stMain] [role=tab]")
            for n in range(tabs.count()):
                tab = tabs.nth(n)
                if tab.get_attribute("aria-selected") == "true" or not tab.is_visible():
                    continue
                tab.click()
                _settled(page)
                charts += _charts_here(page)
            seen += len(charts)
            problems += [f"{path}: {p}" for chart in charts for p in chart_problems(chart)]
    finally:
        ctx.close()
    assert seen > 10, f"only {seen} charts drawn: the pages did not open"
    assert problems == []


# ---------------------------------------------------------------- the charts a measurement button draws
# Each measurement button (grouped by page, pressed in order on one tab), the sliders set first (keys pressed on
# each, ``Home`` = the slider's smallest value) so it runs in seconds on two cores, and the charts it draws (their
# keys; none for continuations, which print text). A chart inside a closed expander is opened before it is read.
SMALLEST = ("Home",)
PRESSES: dict[str, list[tuple[str, dict[str, tuple[str, ...]], tuple[str, ...]]]] = {
    "cost": [("cost_run", {"cost_max_len": SMALLEST}, ("cost_fig_step", "cost_fig_speedup"))],
    "serving": [
        ("srv_batch_run", {"srv_batch_max": ("Home", "ArrowRight", "ArrowRight")}, ("srv_chart_batching",)),
        ("srv_queue_run", {"srv_queue_requests": SMALLEST, "srv_queue_longest": SMALLEST},
         ("srv_chart_timeline_static", "srv_chart_timeline_continuous", "srv_chart_waits")),
        ("srv_spec_run", {"srv_spec_k": SMALLEST, "srv_spec_max_new": SMALLEST}, ("srv_spec_rounds_chart_0_0",)),
    ],
    "tricks": [("tricks_spec_run", {"tricks_spec_k": SMALLEST, "tricks_spec_max_new": SMALLEST},
                ("tricks_whatif_fig", "tricks_spec_fig", "tricks_spec_bars"))],
    "sampling": [("lab_cont_run", {"lab_cont_k": SMALLEST, "lab_cont_m": SMALLEST}, ()),
                 ("lab_beam_run", {"lab_beam_steps": ("Home", "ArrowRight", "ArrowRight")}, ("lab_beam_chart",))],
}
# A measurement whose result chart sits beside its button (button → chart key): once the run ends, with the button
# scrolled to the middle of the screen again, the chart's top is on the screen with at least SEEN_PX of it above the
# screen's foot (its title and the start of its legend or plot), not ~900 px up the page.
BESIDE_ITS_BUTTON = {"tricks_spec_run": "tricks_spec_fig"}
SEEN_PX = 120
CHART_TOP_JS = "key => document.querySelector('.st-key-' + key).getBoundingClientRect().top"
WHILE_RUNNING = "[data-testid=stMain] [data-testid=stProgress], [data-testid=stMain] [data-testid=stSpinner]"
OPEN_EXPANDERS_WITH_CHARTS_JS = """
() => [...document.querySelectorAll('[data-testid=stMain] details:not([open])')]
        .filter(d => d.querySelector('.js-plotly-plot')).forEach(d => d.querySelector('summary').click())
"""
# The box, in the viewport's coordinates, of the progress (or spinner) nearest under the pressed button: a page may
# show other progress bars elsewhere (null: none drawn).
NEAREST_PROGRESS_JS = """
([progress, button]) => {
  const under = document.querySelector(button).getBoundingClientRect().bottom;
  const boxes = [...document.querySelectorAll(progress)].map(e => e.getBoundingClientRect())
                 .filter(b => b.height > 0).sort((a, b) => Math.abs(a.top - under) - Math.abs(b.top - under));
  return boxes.length ? [boxes[0].top, boxes[0].bottom] : null;
}
"""


def _set_slider(page, key: str, presses: tuple[str, ...]) -> None:
    handle = page.locator(f".st-key-{key} input[type=range]").first
    handle.focus()
    for press in presses:
        page.keyboard.press(press)
    _settled(page)


def chart_beside_problem(button: str, chart: str, top: float, screen_h: int) -> list[str]:
    """The chart off the screen that holds its button: above it, or too low for SEEN_PX of it to show."""
    if 0 <= top <= screen_h - SEEN_PX:
        return []
    return [f"{button}: its chart {chart} starts at y {top:.0f}, off the {screen_h} px screen that holds the button"]


def test_the_beside_check_sees_a_chart_above_or_below_the_screen():
    assert chart_beside_problem("b", "c", 0, 800) == [] and chart_beside_problem("b", "c", 680, 800) == []
    assert chart_beside_problem("b", "c", -968, 800) == [
        "b: its chart c starts at y -968, off the 800 px screen that holds the button"]
    assert len(chart_beside_problem("b", "c", -1, 800)) == 1 and len(chart_beside_problem("b", "c", 681, 800)) == 1


def _chart_beside(page, button: str, chart: str, screen_h: int) -> list[str]:
    """After the run: the button scrolled to the middle of the screen again, where the chart's top is."""
    page.locator(f".st-key-{button} button").first.evaluate("b => b.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    return chart_beside_problem(button, chart, page.evaluate(CHART_TOP_JS, chart), screen_h)


def _press_and_watch(page, button: str, screen_h: int) -> list[str]:
    """Press a measurement button (scrolled to the middle of the screen, where a learner would press it) and return
    what was off the first screen: its live progress while it ran."""
    found = []
    page.locator(f".st-key-{button} button").first.evaluate("b => b.scrollIntoView({block: 'center'})")
    page.locator(f".st-key-{button} button").first.click()
    try:
        page.locator(WHILE_RUNNING).first.wait_for(state="visible", timeout=20_000)
        box = page.evaluate(NEAREST_PROGRESS_JS, [WHILE_RUNNING, f".st-key-{button}"])
        if box is not None and not (0 <= box[0] and box[1] <= screen_h):
            found.append(f"{button}: its progress at y {box[0]:.0f}–{box[1]:.0f}, off the first screen")
    except Exception:  # noqa: BLE001 - a quick run can end before its progress is seen
        pass
    _settled(page)
    return found


@pytest.mark.parametrize("size,present", [(NORMAL, False), (PROJECTOR, True)], ids=["normal", "presenter"])
def test_no_chart_a_measurement_draws_draws_over_itself(browser, app_url, size, present):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.set_default_timeout(300_000)
    problems, seen, off_screen = [], set(), []
    try:
        for path, presses in PRESSES.items():
            page.goto(f"{app_url}/{path}{QUERY}" + ("&present=1" if present else ""))
            if present:
                page.wait_for_url("**embed_options=dark_theme**")
            page.locator("h1").first.wait_for()
            _settled(page)
            for button, sliders, draws in presses:
                for key, keys_pressed in sliders.items():
                    _set_slider(page, key, keys_pressed)
                off_screen += _press_and_watch(page, button, size[1])
                for key in draws:
                    page.locator(f".st-key-{key} .js-plotly-plot").first.wait_for(state="attached")
                if button in BESIDE_ITS_BUTTON:
                    off_screen += _chart_beside(page, button, BESIDE_ITS_BUTTON[button], size[1])
                page.evaluate(OPEN_EXPANDERS_WITH_CHARTS_JS)
                charts = _charts_here(page)
                seen |= {chart["key"] for chart in charts}
                problems += [f"{path} after {button}: {p}" for chart in charts for p in chart_problems(chart)]
    finally:
        ctx.close()
    wanted = {f"st-key-{key}" for presses in PRESSES.values() for _, _, draws in presses for key in draws}
    assert wanted <= seen, f"not drawn: {sorted(wanted - seen)}"
    assert sorted(set(problems)) == []
    assert off_screen == []
