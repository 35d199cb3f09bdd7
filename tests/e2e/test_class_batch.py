"""Several tabs press Next token together; the serving page's live panel shows the passes that served them."""
import re

import pytest

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e

TABS, ROUNDS = 4, 3


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text().strip()


def test_tabs_clicking_together_show_up_in_the_live_panel(browser, app_url):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(TABS)]
    pages = [ctx.new_page() for ctx in contexts]
    try:
        for i, page in enumerate(pages):
            page.set_default_timeout(120_000)
            page.goto(f"{app_url}/step?prompt=Tab+{i}+says&cfg_temperature=0")
            page.get_by_role("button", name="Next token").first.wait_for()
        for round_ in range(1, ROUNDS + 1):
            for page in pages:  # clicks land together: none waits for its page to settle first
                page.wait_for_function(
                    "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'")
            for page in pages:
                page.get_by_role("button", name="Next token").first.click()
            for page in pages:
                page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length >= {round_}")
        for page in pages:
            note = page.get_by_text(re.compile(r"This step's forward pass: \d+ ms")).first
            note.wait_for()
        watcher = pages[0]
        watcher.goto(f"{app_url}/serving")
        watcher.get_by_role("heading", name="This server, right now").wait_for()
        passes = int(_metric(watcher, "Decode passes, last minute").replace(",", ""))
        assert passes >= 1
        sentence = watcher.get_by_text(re.compile(r"passes served [\d,]+ tokens")).first.inner_text()
        served = int(re.search(r"passes served ([\d,]+) tokens", sentence).group(1).replace(",", ""))
        assert served >= TABS * ROUNDS and passes <= served  # every click is a token; a pass may carry several
        watcher.locator("[data-testid='stPlotlyChart']").first.wait_for()
        watcher.screenshot(path=str(ARTIFACTS / "serving-live-panel.png"), full_page=True)
    finally:
        for ctx in contexts:
            ctx.close()
