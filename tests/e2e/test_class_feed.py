"""The class feed in Chromium: a student's phone follows the teacher without a rerun of its page, reconnects after
the server restarts, and a removed student's feed closes."""
import re
import urllib.request

import pytest

from .conftest import ARTIFACTS, _free_port, start_class, start_server, stop_server

pytestmark = pytest.mark.e2e

IDLE = "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
# counts the page's script runs from now on (Streamlit marks the app "running" while a run is under way)
COUNT_RUNS = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  window.__runs = 0;
  new MutationObserver(() => { if (app.dataset.testScriptState === 'running') window.__runs += 1; })
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
FEEDS = "Object.values((window.__autoregHall || {feeds: {}}).feeds).map(f => f.received)"


def _ids(page) -> list[int]:
    titles = page.eval_on_selector_all(".tokstrip .tok", "els => els.map(e => e.title)")
    return [int(re.search(r"id (\d+)", t).group(1)) for t in titles]


def _gen(page, n: int, timeout: int = 20_000) -> None:
    page.wait_for_function(f"document.querySelectorAll('.tokstrip .gen').length === {n}", timeout=timeout)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


def test_a_phone_follows_the_feed_reconnects_after_a_restart_and_a_removed_seat_is_shut_out(browser, tmp_path):
    port = _free_port()
    env = {"AUTOREG_CLASS_DB": str(tmp_path / "classes.sqlite3")}
    proc, url = start_server("streamlit-class-feed.log", port=port, env=env)
    laptop = browser.new_context(viewport={"width": 1280, "height": 800})
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    teacher, student = laptop.new_page(), phone.new_page()
    for page in (teacher, student):
        page.set_default_timeout(120_000)
    try:
        code, join = start_class(teacher, url)
        student.goto(f"{url}/?class={code}")
        student.wait_for_function(IDLE)
        student.get_by_role("button", name="Join").click()
        student.get_by_text(f"You are in class {code}").wait_for()
        seat = re.search(r"seat=([^&]+)", student.url).group(1)
        feed = f"{url}/api/class/{code}/feed?seat={seat}"
        assert _status(f"{url}/api/class/{code}/feed?seat=not-a-seat") == 403

        # three steps reach the phone through the feed, and the phone's page never runs its script for them
        student.wait_for_function(IDLE)
        student.evaluate(COUNT_RUNS)
        teacher.get_by_role("link", name="Step through generation").first.click()
        for n in range(1, 4):
            teacher.wait_for_function(IDLE)
            teacher.get_by_role("button", name="Next token").first.click()
            _gen(teacher, n)
            _gen(student, n)
        assert _ids(student) == _ids(teacher) and len(_ids(student)) == len(_ids(teacher))
        assert student.evaluate("window.__runs") == 0
        assert student.evaluate(FEEDS)[0] >= 4  # the first edition and one per step
        student.screenshot(path=str(ARTIFACTS / "class-feed-phone.png"), full_page=True)

        # the server restarts; the phone is not reloaded: its feed reconnects and the next step reaches it
        stop_server(proc)
        proc, _ = start_server("streamlit-class-feed.log", port=port, env=env)
        teacher.reload()
        _gen(teacher, 3)
        teacher.wait_for_function(IDLE)
        teacher.get_by_role("button", name="Next token").first.click()
        _gen(teacher, 4)
        _gen(student, 4, timeout=60_000)
        assert _ids(student) == _ids(teacher)

        # the teacher removes the student: the phone says so, and its seat no longer opens the feed
        teacher.get_by_role("link", name="Class").first.click()
        teacher.get_by_role("button", name="Remove", exact=True).click()
        teacher.get_by_text("Removed: that tab has left the class.").wait_for()
        student.get_by_text("Your teacher removed you from this class.").wait_for(timeout=30_000)
        assert _status(feed) == 403
        student.screenshot(path=str(ARTIFACTS / "class-feed-phone-removed.png"), full_page=True)
    finally:
        laptop.close()
        phone.close()
        stop_server(proc)
