"""What a click changes is on the first screen: on the step page after one press of Next token, the token strip and
the top of this step's chart on a laptop (1280×800); on a phone (390×844) Next token and the strip. And every lesson
page shows its first picture, or the button that makes it, on the first screen of a laptop.

Screenshots go to /tmp/shots-first-screen/ (or $AUTOREG_SHOTS).
"""
import os
from pathlib import Path

import pytest

from .test_presenter_fit import _settled

pytestmark = pytest.mark.e2e

SHOTS = Path(os.environ.get("AUTOREG_SHOTS", "/tmp/shots-first-screen"))
LAPTOP, PHONE = (1280, 800), (390, 844)
QUERY = "?prompt=The+capital+of+France+is"
CLICK_NEXT = "document.querySelector('.st-key-step_next button').click()"
BOX_JS = "s => { const e = document.querySelector(s); if (!e) return null; const b = e.getBoundingClientRect();" \
         " return [b.top, b.bottom]; }"
# The first picture of each lesson page, or the button that makes it (a chart's key or a button's key)
FIRST_PICTURE = {
    "step": ".st-key-step_next",  # before a step the strip is the prompt: the button comes first
    "tokens": "[data-testid=stMain] .js-plotly-plot, [data-testid=stMain] .tokstrip",
    "attention": "[data-testid=stMain] .attstrip, [data-testid=stMain] .js-plotly-plot",  # where it looked
    "sampling": "[data-testid=stMain] .js-plotly-plot",
    "hood": "[data-testid=stMain] .js-plotly-plot, [data-testid=stMain] button[kind=primary]",
    "tricks": "[data-testid=stMain] .js-plotly-plot",
}

# Pages whose first picture is still under the first screen of a laptop: url path → why (not fixed yet)
NOT_YET: dict[str, str] = {}


def _open(browser, app_url: str, size: tuple[int, int], path: str):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.set_default_timeout(180_000)
    page.goto(f"{app_url}/{path}{QUERY}")
    page.locator("h1").first.wait_for()
    _settled(page)
    return ctx, page


def _after_one_step(browser, app_url: str, size: tuple[int, int]):
    ctx, page = _open(browser, app_url, size, "step")
    chips = page.locator(".tokstrip .tok").count()
    page.evaluate(CLICK_NEXT)
    page.wait_for_function(f"document.querySelectorAll('.tokstrip .tok').length > {chips}")
    _settled(page)
    page.locator(".st-key-last_chart .js-plotly-plot").first.wait_for()
    page.evaluate("window.scrollTo(0, 0)")
    return ctx, page


def test_on_a_laptop_one_step_shows_the_strip_and_the_top_of_its_chart(browser, app_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx, page = _after_one_step(browser, app_url, LAPTOP)
    try:
        page.screenshot(path=str(SHOTS / "step-1280x800.png"))
        strip = page.evaluate(BOX_JS, ".tokstrip")
        chart = page.evaluate(BOX_JS, ".st-key-last_chart .js-plotly-plot .gtitle")
        assert strip is not None and strip[1] <= LAPTOP[1], strip
        assert chart is not None and chart[1] <= LAPTOP[1], chart  # at least the chart's title and its first rows
        assert page.evaluate(BOX_JS, ".st-key-last_chart")[0] < LAPTOP[1] - 150  # and the top of its bars
    finally:
        ctx.close()


def test_on_a_phone_next_token_and_the_strip_are_on_the_first_screen(browser, app_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx, page = _after_one_step(browser, app_url, PHONE)
    try:
        page.screenshot(path=str(SHOTS / "step-390x844.png"))
        for what in (".st-key-step_next", ".tokstrip"):
            box = page.evaluate(BOX_JS, what)
            assert box is not None and box[1] <= PHONE[1], (what, box)
    finally:
        ctx.close()


@pytest.mark.parametrize("path", sorted(FIRST_PICTURE))
def test_each_lesson_page_shows_its_first_picture_on_the_first_screen(browser, app_url, path, request):
    if path in NOT_YET:
        request.applymarker(pytest.mark.xfail(reason=NOT_YET[path], strict=False))
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx, page = _open(browser, app_url, LAPTOP, path)
    try:
        page.wait_for_timeout(800)
        page.screenshot(path=str(SHOTS / f"{path}-1280x800.png"))
        box = page.evaluate(BOX_JS, FIRST_PICTURE[path])
        assert box is not None and box[0] < LAPTOP[1] - 60, (path, box)
    finally:
        ctx.close()
