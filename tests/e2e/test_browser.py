"""The main click paths in a real browser: the app as a learner sees it."""
import pytest

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e


def _no_errors(page):
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0


def _generated(page) -> int:
    return page.locator(".tokstrip .gen").count()


def _open_app(page, app_url) -> None:
    page.goto(app_url + "/step")  # a bare / opens Start here
    page.locator(".tokstrip").first.wait_for()


def _next_tokens(page, n: int) -> None:
    """Click Next token n times, each time waiting for the new chip."""
    start = _generated(page)
    for i in range(start + 1, start + n + 1):
        page.get_by_role("button", name="Next token").first.click()
        page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length >= {i}")


def _screenshot(page, name: str, height: int) -> None:
    """Streamlit scrolls inside its main block, so a tall viewport is what shows the whole page."""
    page.set_viewport_size({"width": 1400, "height": height})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / name))


def test_next_token_five_times(page, app_url):
    _open_app(page, app_url)
    page.get_by_role("heading", name="Step through generation").wait_for()
    assert _generated(page) == 0
    _next_tokens(page, 5)
    assert _generated(page) == 5
    page.get_by_text("Step 5:").first.wait_for()
    _no_errors(page)
    page.screenshot(path=str(ARTIFACTS / "step-page.png"), full_page=True)


def test_keyboard_shortcut_steps(page, app_url):
    _open_app(page, app_url)
    page.get_by_role("button", name="Next token").first.wait_for()  # the key belongs to this button
    for _ in range(3):  # a key pressed while the script is still running may be dropped: wait and retry
        page.wait_for_function(
            "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'")
        page.locator("h1").first.click()  # focus the page, not a text box
        page.keyboard.press("n")
        try:
            page.wait_for_function("document.querySelectorAll('.tokstrip .gen').length >= 1", timeout=20_000)
            break
        except Exception:  # noqa: BLE001 - not stepped yet: try the key again
            continue
    assert _generated(page) >= 1  # a slow first press and a retry may both land
    _no_errors(page)


def test_click_a_bar_forces_that_token(page, app_url):
    _open_app(page, app_url)
    page.get_by_role("tab", name="Force the next token").click()  # only the open view is drawn
    page.get_by_text("Candidates for the next token (nothing drawn yet)").first.wait_for()  # the chart's title
    chart = page.locator(".js-plotly-plot").last  # "what could come next"
    chart.locator("g.point path").first.wait_for()
    label = chart.locator(".xtick text").nth(1).text_content()
    chart.locator("g.point path").nth(1).click(force=True)  # the second candidate's bar
    page.wait_for_function("document.querySelectorAll('.tokstrip .gen').length >= 1")
    chip = page.locator(".tokstrip .gen").first
    assert "forced" in chip.get_attribute("title")
    # the token; its probability follows, for screen readers
    assert chip.evaluate("e => e.firstChild.textContent") == label
    spoken = chip.locator(".sr").text_content()
    assert spoken.startswith(", probability ") and spoken.endswith(", forced")
    _no_errors(page)


def _open_page(page, name: str, heading: str):
    page.get_by_role("link", name=name).click()
    page.get_by_role("heading", name=heading).first.wait_for()


def test_attention_page_after_a_few_steps(page, app_url):
    _open_app(page, app_url)
    _next_tokens(page, 3)
    page.get_by_role("link", name="Attention and the KV cache").click()
    page.get_by_role("tab", name="1 · Where it looked").wait_for()
    page.get_by_role("button", name="Next token").first.click()  # step from this page, capture on
    page.get_by_text("decode step 4", exact=False).first.wait_for()
    page.locator(".st-key-att_bar .js-plotly-plot").wait_for()
    assert page.locator(".js-plotly-plot").count() == 1  # only the open section is drawn
    _screenshot(page, "attention-page.png", 1600)
    for section, chart in (("2 · Causal triangle", "att_triangle"), ("4 · KV cache", "att_cache_growth"),
                           ("6 · Prefill vs decode", "att_phase")):
        page.get_by_role("tab", name=section).click()
        page.locator(f".st-key-{chart} .js-plotly-plot").wait_for()
        if chart == "att_cache_growth":
            page.get_by_text("Equal, byte for byte", exact=False).first.wait_for()
    _no_errors(page)


def test_sampling_lab_opens_and_draws(page, app_url):
    _open_app(page, app_url)
    _open_page(page, "Sampling lab", "1 · Sampling one set of logits")
    page.get_by_role("heading", name="4 · Beam search").wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    page.get_by_role("button", name="Run beam search").click()
    page.get_by_text("Best beam: sum log-prob", exact=False).first.wait_for()
    _no_errors(page)
    _screenshot(page, "sampling-page.png", 6000)


def test_cost_page_runs_a_short_race(page, app_url):
    _open_app(page, app_url)
    _open_page(page, "Naive vs KV cache", "1 · The race")
    page.get_by_role("button", name="Run the race").first.click()
    page.get_by_text("Speed-up per step at L =", exact=False).first.wait_for(timeout=240_000)
    _no_errors(page)
    _screenshot(page, "cost-page.png", 5200)


def test_typing_n_in_the_prompt_does_not_step(page, app_url):
    _open_app(page, app_url)
    box = page.get_by_label("Prompt")
    box.click()
    box.press("End")
    box.type(" and then")
    assert box.input_value().endswith("and then")
    # A positive signal instead of a pause: one real click must give exactly one token. Had the typed
    # "n" stepped too, the strip would hold two once the click's run has finished.
    page.get_by_role("button", name="Next token").first.click()
    page.wait_for_function("document.querySelectorAll('.tokstrip .gen').length >= 1")
    page.wait_for_function(
        "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'")
    assert _generated(page) == 1
