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


NAMES = {"start": "Start here", "step": "Step through generation", "tokens": "Tokens",
         "attention": "Attention and the KV cache", "sampling": "Sampling lab", "cost": "Naive vs KV cache",
         "inside": "Inside generation", "serving": "How servers go fast", "glossary": "Glossary", "class": "Class",
         "hood": "Under the hood", "tricks": "More serving tricks"}


def test_every_page_opens_by_its_own_name(browser, app_url):
    """/step, /tokens, … each open their page (no "Page not found"), and a bare / opens Start here."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    for path, title in [*NAMES.items(), ("", "Start here")]:
        page.goto(f"{app_url}/{path}")
        page.get_by_role("heading", name=title).first.wait_for()
        page.wait_for_timeout(300)
        assert page.get_by_text("Page not found").count() == 0, path
        nav = page.locator("[data-testid='stSidebarNav'] a").all_inner_texts()
        assert len(nav) == len(NAMES), nav  # the root's alias of the step page stays out of the menu
    ctx.close()


def test_the_root_opens_start_here_and_a_link_from_before_still_opens_the_step_page(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(app_url + "/")
        page.get_by_role("heading", name="Start here").wait_for()
        page.wait_for_url("**/start**")
        page.goto(app_url + "/?prompt=The+capital+of+France+is&cfg_temperature=0&steps=3")
        page.get_by_role("heading", name="Step through generation").wait_for()
        page.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 3")
        page.goto(app_url + "/step")
        page.get_by_role("heading", name="Step through generation").wait_for()
    finally:
        ctx.close()
