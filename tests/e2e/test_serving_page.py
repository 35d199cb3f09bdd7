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


def test_a_tab_alone_is_offered_requests_of_its_own_and_a_tab_with_company_is_not(browser):
    """On a fresh server nobody has stepped: the panel says so and offers requests of the tab's own; pressed, the
    panel counts real passes. Once another tab steps, the offer is gone."""
    from autoreg_ui.lessons.serving import controller as serving
    from autoreg_ui.lessons.serving import keys

    from .conftest import start_server, stop_server
    from .test_presenter_fit import _settled

    proc, url = start_server("streamlit-serving-alone.log")
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = ctx.new_page()
        page.set_default_timeout(180_000)
        page.goto(f"{url}/serving")
        page.locator("h1").first.wait_for()
        _settled(page)
        page.get_by_text("No decode step, yours included, went through this model's batcher").wait_for()
        page.locator(f".st-key-{keys.SRV_OWN_REQUESTS} button").first.click()
        page.get_by_text(f"Your {serving.OWN_REQUESTS} requests, sent ").wait_for()
        page.get_by_text(f"asked for {serving.OWN_REQUESTS * serving.OWN_STEPS} decode steps").wait_for()
        page.get_by_text("Apart from your own text and the requests you sent, none of the other texts").wait_for()
        assert page.get_by_text("Send a few requests of your own").count() == 0  # not asked for what was just done
        assert page.get_by_text("Decode passes, last minute").count() == 1
        other = ctx.new_page()
        other.set_default_timeout(180_000)
        other.goto(f"{url}/step?prompt=The+capital+of+France+is")
        other.locator("h1").first.wait_for()
        _settled(other)
        chips = other.locator(".tokstrip .tok").count()
        other.evaluate("document.querySelector('.st-key-step_next button').click()")
        other.wait_for_function(f"document.querySelectorAll('.tokstrip .tok').length > {chips}")
        page.reload()
        page.locator("h1").first.wait_for()
        _settled(page)
        page.get_by_text("Decode passes, last minute").wait_for()
        assert page.locator(f".st-key-{keys.SRV_OWN_REQUESTS}").count() == 0
        for said in ("went through this model's batcher", "stepped through its batcher"):  # every alone sentence
            assert page.get_by_text(said).count() == 0
        assert page.get_by_text("None", exact=True).count() == 0
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        ctx.close()
        stop_server(proc)
