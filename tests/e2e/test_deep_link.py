"""A link to a page, as the very first request a fresh server sees, opens the full app on that page."""
import pytest

from .conftest import start_server, stop_server

pytestmark = pytest.mark.e2e


def test_a_deep_link_first_gets_the_whole_app(browser):
    proc, url = start_server("streamlit-deep-link.log")
    try:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.set_default_timeout(120_000)
        page.goto(url + "/attention?layer=3&head=mean")
        page.get_by_role("heading", name="Attention and the KV cache").wait_for()
        page.get_by_text("Temperature (0 = greedy)").first.wait_for()  # the shared sidebar ran: app.py ran
        nav = page.locator("[data-testid='stSidebarNav'] a").all_inner_texts()
        assert any("Step through generation" in item for item in nav)
        assert not any(item.strip() in ("app", "step", "attention") for item in nav)  # no file-name navigation
        ctx.close()
    finally:
        stop_server(proc)
