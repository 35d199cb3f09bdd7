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
