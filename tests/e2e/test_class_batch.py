"""Several tabs press Next token together; the serving page's live panel, open in another tab, shows the passes
that served them as they happen (no reload): the counts grow by exactly this test's clicks, and some pass
carried more than one tab's step."""
import re
import time

import pytest

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e

TABS = 4
MIN_ROUNDS, MAX_ROUNDS = 3, 8  # more rounds only while no pass has been shared yet
LIVE_WAIT_S = 60  # the panel redraws every 5 s; a loaded machine may be slower
TOTALS = re.compile(r"Since this server started: ([\d,]+) pass(?:es)? served ([\d,]+) tokens?, ([\d,]+) of them")
NOT_RUNNING = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
CLICK_NEXT = "document.querySelector('.st-key-step_next button').click()"  # returns at once: clicks land together


def _totals(page) -> tuple[int, int, int]:
    """(passes, tokens, tokens in shared passes) since the server started, as the live panel says them."""
    found = TOTALS.search(page.get_by_text(TOTALS).first.inner_text())
    return tuple(int(g.replace(",", "")) for g in found.groups())


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text().strip()


def _generated(page) -> int:
    return page.evaluate("document.querySelectorAll('.tokstrip .gen').length")


def test_tabs_clicking_together_show_up_in_the_live_panel(browser, app_url):
    watcher_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(TABS)]
    try:
        watcher = watcher_ctx.new_page()
        watcher.set_default_timeout(120_000)
        watcher.goto(f"{app_url}/serving")
        watcher.get_by_role("heading", name="This server, right now").wait_for()
        watcher.get_by_text(TOTALS).first.wait_for()
        pages = [ctx.new_page() for ctx in contexts]
        for i, page in enumerate(pages):
            page.set_default_timeout(120_000)
            page.goto(f"{app_url}/step?prompt=Tab+{i}+says&cfg_temperature=0")
            page.get_by_role("button", name="Next token").first.wait_for()
        for page in pages:
            page.wait_for_function(NOT_RUNNING)
        before = _totals(watcher)  # no tab here has stepped yet, and no other test runs meanwhile

        clicks, shared_seen = 0, False
        for round_ in range(1, MAX_ROUNDS + 1):
            for page in pages:  # every tab idle, then the clicks go out back to back
                page.wait_for_function(NOT_RUNNING)
            for page in pages:
                page.evaluate(CLICK_NEXT)
            clicks += TABS
            for page in pages:
                page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length >= {round_}")
                page.wait_for_function(NOT_RUNNING)
                assert _generated(page) == round_  # one click, one token: the count below is exact
            notes = [page.get_by_text(re.compile(r"This step's forward pass: \d+ ms")).first.inner_text()
                     for page in pages]
            shared_seen = shared_seen or any("shared with" in note for note in notes)
            if round_ >= MIN_ROUNDS and shared_seen:
                break

        # the watcher is never reloaded: its panel redraws itself
        deadline = time.monotonic() + LIVE_WAIT_S
        after = _totals(watcher)
        while after[1] < before[1] + clicks and time.monotonic() < deadline:
            watcher.wait_for_timeout(500)
            after = _totals(watcher)
        passes, tokens, shared = (a - b for a, b in zip(after, before))
        assert tokens == clicks, (before, after, clicks)  # every click of this test, and nothing else
        assert shared >= 2 and passes < clicks, (before, after, clicks)  # some pass carried ≥ 2 tabs' steps
        assert max(int(n) for n in re.findall(r"carried (\d+) tab", watcher.get_by_text(
            re.compile(r"the largest pass carried \d+ tab")).first.inner_text())) >= 2
        watcher.locator("[data-testid='stPlotlyChart']").first.wait_for()
        watcher.screenshot(path=str(ARTIFACTS / "serving-live-panel.png"), full_page=True)

        # a tab whose last step shared a pass sees, on the serving page, how many it rode with
        rode = pages[-1]
        note = rode.get_by_text(re.compile(r"This step's forward pass: \d+ ms")).first.inner_text()
        others = re.search(r"shared with (\d+) other tab", note)
        rode.get_by_role("link", name="How servers go fast").first.click()  # the same session, another page
        rode.get_by_role("heading", name="This server, right now").wait_for()
        expected = "alone" if others is None else f"{others.group(1)} other tab" + ("s" if int(others.group(1)) > 1
                                                                                     else "")
        assert _metric(rode, "Your last step rode with") == expected
    finally:
        for ctx in [watcher_ctx, *contexts]:
            ctx.close()
