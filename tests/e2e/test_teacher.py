"""The teacher's tools in a real browser: links that replay exactly, presenter mode, keys, export, hand-out."""
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from .conftest import ARTIFACTS
from .test_browser import _generated, _no_errors

pytestmark = pytest.mark.e2e

PAGES = ["step", "attention", "sampling", "cost", "inside", "serving"]
PATHS = {name: name for name in PAGES}  # every page by its name (a bare / opens Start here)
HEADINGS = {"step": "Step through generation", "attention": "Attention and the KV cache", "sampling": "Sampling lab",
            "cost": "Naive vs KV cache", "inside": "Inside generation", "serving": "How servers go fast"}
VIEW = {"width": 1400, "height": 1000}


def _context(browser, **kwargs):
    ctx = browser.new_context(viewport=VIEW, accept_downloads=True, **kwargs)
    ctx.set_default_timeout(180_000)
    return ctx


def _chips(page) -> list[str]:
    """Every generated token's hover text: its id, probabilities, rank, log-prob and whether it was forced."""
    return page.eval_on_selector_all(".tokstrip .gen", "els => els.map(e => e.title)")


def _metrics(page) -> list[str]:
    """Generated tokens, sequence log-prob, perplexity, entropy (the last one, a time, differs run to run)."""
    page.wait_for_function("document.querySelectorAll('[data-testid=stMain] [data-testid=stMetricValue]').length >= 5")
    return page.eval_on_selector_all("[data-testid=stMain] [data-testid=stMetricValue]",
                                     "els => els.map(e => e.innerText)")[:4]


def _wait_chips(page, n: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length === {n}")


def _query(url: str) -> dict:
    return parse_qs(urlsplit(url).query)


def _wait_steps(page, steps: int | None) -> None:
    want = "null" if steps is None else f"'{steps}'"
    page.wait_for_function(f"new URLSearchParams(location.search).get('steps') === {want}")


def _idle(page) -> None:
    """Wait until the app's script has finished its run (a key pressed during a run may be dropped)."""
    page.locator("[class*=st-key-teacher_row] button").first.wait_for()  # the keys belong to its buttons
    page.wait_for_function("document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'")


def _press(page, key: str) -> None:
    _idle(page)
    page.locator("h1").first.click()  # the keys act when no text box has the focus
    page.keyboard.press(key)


def _two_steps_and_a_forced_token(page, url: str) -> None:
    """Open ``url``, press N twice, then force " banana" as the third token."""
    page.goto(url)
    page.locator(".tokstrip").first.wait_for()
    for n in (1, 2):
        _press(page, "n")
        _wait_chips(page, n)
    page.get_by_role("tab", name="Force the next token").click()  # only the open view is drawn
    page.get_by_label("…or type one token to force", exact=False).fill(" banana")
    page.get_by_role("button", name="Force this token").click()
    _wait_chips(page, 3)


def test_a_link_replays_the_same_tokens_and_numbers_in_a_fresh_browser(browser, app_url):
    ctx = _context(browser, permissions=["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    _two_steps_and_a_forced_token(page, app_url + "/?cfg_temperature=1.3&cfg_top_k=20&cfg_seed=7")
    slider = page.locator("[data-testid=stSidebar] input[type=range][aria-label^='Temperature']")  # 1.3 → 1.1
    slider.focus()
    for _ in range(4):
        slider.press("ArrowLeft")
    page.wait_for_function("new URLSearchParams(location.search).get('cfg_temperature')?.startsWith('1.1')")
    page.wait_for_timeout(1000)
    for n in (4, 5):
        _press(page, "n")
        _wait_chips(page, n)
    _wait_steps(page, 5)
    query = _query(page.url)
    assert query["steps"] == ["5"] and query["cfg_seed"] == ["7"] and query["cfg_top_k"] == ["20"]
    assert query["forced"][0].startswith("3-") and query["seg"][0] == "1~t1.3~k20" and len(query["seg"]) == 2
    chips, metrics, url = _chips(page), _metrics(page), page.url
    assert len(chips) == 5 and "forced" in chips[2] and "forced" not in chips[3]
    page.locator("#autoreg-copy-link").click()
    page.get_by_text("Copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == url
    _no_errors(page)

    fresh = _context(browser)  # another browser profile: no cookies, no session
    other = fresh.new_page()
    other.goto(url)
    other.get_by_text("Rebuilt from the link: the prompt and 5 steps, replayed exactly.").wait_for()
    _wait_chips(other, 5)
    assert _chips(other) == chips and _metrics(other) == metrics and len(metrics) == 4
    assert _query(other.url) == query
    _no_errors(other)
    ctx.close()
    fresh.close()


def _sizes(page) -> dict:
    """Computed font sizes (px) of page text and of the first chart's tick labels and axis title."""
    return page.evaluate("""() => {
        const px = el => el ? parseFloat(getComputedStyle(el).fontSize) : null;
        const chart = document.querySelector('.js-plotly-plot');
        return {h1: px(document.querySelector('h1')),
                caption: px(document.querySelector('[data-testid=stMain] [data-testid=stCaptionContainer] p')),
                button: px(document.querySelector('[class*=st-key-teacher_row] button p')),
                tick: px(chart && chart.querySelector('.xtick text')),
                axis: px(chart && chart.querySelector('.g-ytitle text'))};
    }""")


LINK = "prompt=The+capital+of+France+is&steps=3&cfg_temperature=0"


def test_presenter_mode_is_large_dark_and_folded_on_every_page(browser, app_url):
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(f"{app_url}/?{LINK}")
    _wait_chips(page, 3)
    page.locator(".js-plotly-plot .xtick text").first.wait_for()
    normal = _sizes(page)
    assert page.evaluate("getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor") == \
           "rgb(255, 255, 255)"

    page.goto(f"{app_url}/?{LINK}&present=1")  # reloads itself once into the dark theme
    page.wait_for_url("**embed_options=dark_theme**")
    _wait_chips(page, 3)
    page.locator(".js-plotly-plot .xtick text").first.wait_for()
    page.wait_for_timeout(1500)
    big = _sizes(page)
    # the title is compacted to one row so that one step fits one projector screen, and stays large
    # enough for the back row; the rest of the type grows
    assert big["h1"] >= 32 and big["caption"] > normal["caption"] and big["button"] > normal["button"]
    assert big["caption"] >= 1.3 * normal["caption"]
    assert big["tick"] >= 18 > 13 >= normal["tick"] and big["axis"] >= 20 > normal["axis"]
    assert page.evaluate("getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor") == \
           "rgb(11, 14, 20)"
    assert page.locator("[data-testid=stSidebar]").get_attribute("data-collapsed") == "true"
    page.get_by_text("Explanation").first.wait_for()  # the lesson text is folded away
    assert _query(page.url)["present"] == ["1"]
    _no_errors(page)

    for name in PAGES:  # what the class sees, page by page
        page.goto(f"{app_url}/{PATHS[name]}?{LINK}&present=1&embed_options=dark_theme")
        page.get_by_role("heading", name=HEADINGS[name]).first.wait_for()
        page.locator("[class*=st-key-teacher_row] button").first.wait_for()
        page.wait_for_timeout(4000)
        _no_errors(page)
        page.set_viewport_size({"width": 1400, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"presenter-{name}.png"))
        page.set_viewport_size({"width": 1400, "height": 4200})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(ARTIFACTS / f"presenter-{name}-long.png"))
        page.set_viewport_size(VIEW)
    ctx.close()


def test_every_key_works_on_every_page_and_not_while_typing(browser, app_url):
    ctx = _context(browser)
    page = ctx.new_page()
    for name in PAGES:
        page.goto(f"{app_url}/{PATHS[name]}")
        page.get_by_role("heading", name=HEADINGS[name]).first.wait_for()
        page.locator("[class*=st-key-teacher_row] button").first.wait_for()
        _press(page, "n")
        _wait_steps(page, 1)
        _press(page, "g")  # generate N = 10
        _wait_steps(page, 11)
        _press(page, "u")
        _wait_steps(page, 10)
        _press(page, "x")  # reset (Streamlit keeps C and R for itself)
        _wait_steps(page, None)
        if name == "sampling":
            page.get_by_role("tab", name="The draw", exact=True).click()  # the view with the draw's chart
            draw = page.locator("button[data-filename^='autoreg-sampling-draw-seed'][data-format=png]")
            seed = int(draw.get_attribute("data-filename").rsplit("seed", 1)[1])
            _press(page, "a")  # draw again
            page.locator(f"button[data-filename='autoreg-sampling-draw-seed{seed + 1}']").first.wait_for()
        if name == "cost":
            _press(page, "a")  # run the race
            page.locator("[data-testid=stProgress]").first.wait_for()
            page.get_by_role("button", name="Stop").click()
            page.get_by_role("button", name="Run the race").first.wait_for()
        box = page.get_by_label("Stop sequences", exact=False)
        box.click()
        box.type("ngux a")
        page.locator("h1").first.click()  # leaving the box commits its value: a rerun we can wait for
        page.wait_for_function("new URLSearchParams(location.search).get('cfg_stops') === 'ngux a'")
        page.wait_for_function(
            "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'")
        assert box.input_value() == "ngux a"
        assert "steps" not in _query(page.url) and page.locator("[data-testid=stProgress]").count() == 0
        _no_errors(page)
    ctx.close()


def test_export_import_csv_chart_images_and_an_offline_hand_out(browser, app_url, tmp_path):
    ctx = _context(browser)
    page = ctx.new_page()
    _two_steps_and_a_forced_token(page, app_url + "/?cfg_seed=3&cfg_top_p=0.8")
    page.get_by_role("tab", name="The chain rule, running").click()
    page.locator("button[data-filename='autoreg-step-chain-rule'][data-format=svg]").wait_for()
    chips, metrics = _chips(page), _metrics(page)

    def download(locator) -> Path:
        with page.expect_download() as event:
            locator.click()
        path = tmp_path / event.value.suggested_filename
        event.value.save_as(path)
        return path

    svg = download(page.locator("button[data-filename='autoreg-step-chain-rule'][data-format=svg]"))
    assert svg.name == "autoreg-step-chain-rule.svg" and svg.read_text()[:4] == "<svg"
    png = download(page.locator("button[data-filename='autoreg-step-chain-rule'][data-format=png]"))
    assert png.name == "autoreg-step-chain-rule.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.get_by_role("tab", name="History").click()
    csv = download(page.get_by_role("button", name="Download CSV", exact=False))
    header, first = csv.read_text().splitlines()[:2]
    assert header.endswith("model,prompt,chat,seed,temperature,top_k,top_p,min_p,repetition_penalty,"
                           "max_new_tokens,stop_sequences")
    assert ",The cat sat on the,False,3,0.8,50,0.8,0.0,1.0,64,[]" in first
    saved = download(page.get_by_role("button", name="Save the session (JSON)"))
    data = json.loads(saved.read_text())
    assert [s["forced"] for s in data["steps"]] == [False, False, True] and data["recipe"]["seed"] == 3
    handout = download(page.get_by_role("button", name="Hand-out", exact=False))
    (ARTIFACTS / "handout.html").write_bytes(handout.read_bytes())
    _no_errors(page)

    fresh = _context(browser)
    other = fresh.new_page()
    other.goto(app_url + "/step")
    other.locator(".tokstrip").first.wait_for()
    other.locator("[data-testid=stSidebar] input[type=file]").set_input_files(str(saved))
    other.get_by_text("Rebuilt from the session file: the prompt and 3 steps, replayed exactly.").wait_for()
    _wait_chips(other, 3)
    assert _chips(other) == chips and _metrics(other) == metrics
    assert other.get_by_role("spinbutton", name="Seed").input_value() == "3"
    _wait_steps(other, 3)
    _no_errors(other)

    offline = _context(browser)
    offline.set_offline(True)
    offline.route(re.compile(r"^(https?|wss?)://"), lambda route: route.abort())  # and no network anyway
    sheet = offline.new_page()
    asked = []
    sheet.on("request", lambda request: asked.append(request.url))
    sheet.goto(handout.as_uri())
    sheet.locator(".js-plotly-plot .main-svg").first.wait_for()
    sheet.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === "
                            "document.querySelectorAll('.chart').length")
    assert sheet.locator(".chart").count() == 2 and sheet.locator(".tokstrip .gen").count() == 3  # step page only
    assert sheet.evaluate("typeof window.Plotly") == "object"
    assert [url for url in asked if not url.startswith(("file:", "data:"))] == []
    sheet.screenshot(path=str(ARTIFACTS / "handout.png"), full_page=True)
    for c in (ctx, fresh, offline):
        c.close()


def test_a_hostile_link_shows_messages_and_runs_nothing(page, app_url):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(app_url + "/?prompt=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&steps=2&forced=1-99999999"
                        "&cfg_top_p=7&%3Cscript%3Ealert(2)%3C%2Fscript%3E=1")
    page.locator(".tokstrip").first.wait_for()
    page.get_by_text("is not a token of this model", exact=False).wait_for()
    page.get_by_text("this app does not know", exact=False).wait_for()
    page.get_by_text("top-p 7 is outside 0–1", exact=False).wait_for()
    page.wait_for_timeout(1500)
    assert dialogs == [] and page.locator("img[src=x]").count() == 0
    assert _generated(page) == 0
    _press(page, "n")
    _wait_chips(page, 1)
    assert page.locator("[data-testid=stException]").count() == 0
