"""The serving page in a real browser: measure the batching curve on the embedded model."""
import pytest

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e


def test_batching_curve_is_measured_and_drawn(page, app_url):
    page.goto(f"{app_url}/serving")
    page.get_by_role("heading", name="How servers go fast").wait_for()
    page.get_by_role("button", name="Measure the batching curve").click()
    page.get_by_text("One row:").first.wait_for()
    page.get_by_text("One decode step with a").first.wait_for()  # the measured chart's title
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    page.screenshot(path=str(ARTIFACTS / "serving-page.png"), full_page=True)
