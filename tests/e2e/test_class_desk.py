"""The class desk in the middle of a lesson: a teacher in presenter mode at 1280×720 on a lesson stop asks, counts
the answers, reveals and starts sampling rounds from the path bar, without leaving the stop or scrolling; two
students (one on a phone) follow. Then the Class page: ending asks first, the record downloads whole.
Screenshots go to /work/shots39/ (or $AUTOREG_SHOTS39)."""
import json
import os
import re
from pathlib import Path

import pytest

from autoreg_ui import lesson_path_text
from autoreg_ui.classroom import text
from autoreg_ui.lessons.start import text as start_text

pytestmark = pytest.mark.e2e

SHOTS = Path(os.environ.get("AUTOREG_SHOTS39", "/work/shots39"))
WIDTH, HEIGHT = 1280, 720
BAR = ".st-key-lesson_path_bar"
MAIN = "[data-testid=stMain]"
POPOVER_CHART = "[data-testid=stPopoverBody] [data-testid=stPlotlyChart]"
GUESSES = ("zebraquux", "wombatfizz")  # typed by the students: never a token's whole label


def _settled(page) -> None:
    page.wait_for_function(
        "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
        " && document.querySelectorAll('[data-testid=stSkeleton]').length === 0", timeout=180_000)
    page.wait_for_timeout(600)


def _click(page, locator) -> None:
    locator.click()
    page.wait_for_timeout(500)
    _settled(page)


def _shot(page, name: str) -> None:
    page.mouse.move(0, 5)
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / name))


def _in_first_screen(page, locator) -> None:
    """In the viewport as the page is now: the teacher reaches it without scrolling."""
    box = locator.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, box


def _student(browser, url: str, code: str, nick: str, phone: bool):
    viewport = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 800}
    ctx = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}/?class={code}")
    page.get_by_label(text.NICK_BOX).fill(nick)
    _click(page, page.get_by_role("button", name=text.JOIN_BUTTON))
    page.get_by_text(text.YOU_ARE.format(code=code, as_name=f" as {nick}")[:20]).first.wait_for()
    return ctx, page


def _download_json(page, button) -> dict:
    """The file a download button makes when clicked (once more if a redraw of the page cancelled the first)."""
    for attempt in range(3):
        _settled(page)
        with page.expect_download() as got:
            button.click()
        try:
            return json.loads(Path(got.value.path()).read_text())
        except Exception:  # noqa: BLE001 - "canceled": the page redrew while the file was fetched
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _guess(page, guess: str) -> None:
    box = page.get_by_label(text.GUESS_BOX, exact=True).and_(page.locator("input"))
    box.wait_for()
    box.fill(guess)
    _click(page, page.get_by_role("button", name=text.GUESS_SEND))
    page.get_by_text("is in.").first.wait_for()


def test_the_desk_runs_a_class_from_the_lesson_stop(browser, app_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, accept_downloads=True)
    teacher = ctx.new_page()
    teacher.set_default_timeout(180_000)
    others = []
    try:
        teacher.goto(f"{app_url}/?present=1")
        teacher.wait_for_url("**/start?**")
        _settled(teacher)
        _click(teacher, teacher.get_by_role("button", name=start_text.TEACH_PATH).first)
        bar = teacher.locator(BAR)
        # Start a class on the path bar: the tab stays on the stop; the code is on the desk
        _click(teacher, bar.get_by_role("button", name=text.START_BUTTON))
        desk_code = bar.get_by_role("button", name=re.compile(r"^Class [A-Z0-9]{6}"))
        desk_code.wait_for()
        code = re.search(r"[A-Z0-9]{6}", desk_code.inner_text()).group(0)
        assert "/start" in teacher.url
        _click(teacher, bar.get_by_role("button", name=lesson_path_text.NEXT))
        teacher.get_by_text("stop 2 of").first.wait_for()
        assert "/step?" in teacher.url
        stop_url = teacher.url.split("?")[0]

        phone_ctx, phone = _student(browser, app_url, code, "Ann", phone=True)
        laptop_ctx, laptop = _student(browser, app_url, code, "Bob", phone=False)
        others += [phone_ctx, laptop_ctx]

        # ask from the stop; the answers come in on the bar without a reload
        ask = bar.get_by_role("button", name=text.ASK_BUTTON)
        _in_first_screen(teacher, ask)
        _click(teacher, ask)
        bar.get_by_text("Answers in: 0 of 2").wait_for()
        _shot(teacher, "projector-asked.png")
        _guess(phone, GUESSES[0])
        _shot(phone, "phone-guessed.png")
        bar.get_by_text("Answers in: 1 of 2").wait_for(timeout=30_000)
        _guess(laptop, GUESSES[1])
        bar.get_by_text("Answers in: 2 of 2").wait_for(timeout=30_000)
        reveal = bar.get_by_role("button", name=text.REVEAL_BUTTON)
        _in_first_screen(teacher, reveal)
        _click(teacher, reveal)
        popover = bar.get_by_role("button", name=re.compile(r"^Guesses \(2\)"))
        popover.wait_for()
        _click(teacher, popover)
        teacher.locator(POPOVER_CHART).locator("visible=true").first.wait_for(timeout=30_000)
        _shot(teacher, "projector-revealed.png")
        page_text = teacher.locator("body").inner_text()
        for typed in GUESSES:  # the toggle is off: nothing a student typed is on the teacher's page
            assert typed not in page_text
        _click(teacher, popover)  # closed again
        phone.get_by_text("points").first.wait_for(timeout=30_000)
        _shot(phone, "phone-revealed.png")

        # a sampling round from the stop; then a step and a second round
        sample = bar.get_by_role("button", name=text.SAMPLE_BUTTON)
        _in_first_screen(teacher, sample)
        _click(teacher, sample)
        assert teacher.url.split("?")[0] == stop_url  # never left the stop
        phone.get_by_text("Your tab drew").first.wait_for(timeout=60_000)
        laptop.get_by_text("Your tab drew").first.wait_for(timeout=60_000)
        _shot(phone, "phone-drew.png")
        bar.get_by_text("Draws in: 2 of 2").wait_for(timeout=30_000)
        _click(teacher, bar.get_by_role("button", name=text.DESK_TREE))
        teacher.locator(POPOVER_CHART).locator("visible=true").first.wait_for(timeout=30_000)
        _shot(teacher, "projector-sampled.png")
        _click(teacher, bar.get_by_role("button", name=text.DESK_TREE))  # closed again

        # the teacher moves on: no phone shows the previous question's result or draw
        _click(teacher, teacher.locator(f"{MAIN} .st-key-teacher_row_step button:has-text('Next token')").first)
        phone.wait_for_function("document.querySelectorAll('.tokstrip .gen').length === 2", timeout=30_000)
        phone.get_by_text("The model drew").first.wait_for(state="detached", timeout=15_000)
        _settled(phone)
        phone_text = phone.locator("[data-testid=stMain]").inner_text()
        _shot(phone, "phone-moved-on.png")
        assert "The model drew" not in phone_text and "Your guess" not in phone_text, phone_text
        assert "Your tab drew" not in phone_text
        _shot(phone, "phone-moved-on.png")
        _click(teacher, bar.get_by_role("button", name=text.SAMPLE_BUTTON))
        phone.get_by_text("Your tab drew").first.wait_for(timeout=60_000)
        laptop.get_by_text("Your tab drew").first.wait_for(timeout=60_000)
        assert teacher.url.split("?")[0] == stop_url

        # the Class page: the question leads, the code is folded; End asks first; the record holds the class
        teacher.goto(teacher.url.replace("/step?", "/class?"))
        _settled(teacher)
        teacher.get_by_role("heading", name=text.QUESTION_HEADER).wait_for()
        _shot(teacher, "projector-class-page.png")
        assert "zebraquux" not in teacher.locator("body").inner_text()
        _click(teacher, teacher.get_by_role("button", name=text.END_BUTTON))
        teacher.get_by_text(text.END_CONFIRM[:30]).wait_for()
        _settled(phone)
        assert "ended or expired" not in phone.locator("body").inner_text()  # one click ended nothing
        record = _download_json(teacher, teacher.get_by_role("button", name=text.RECORD_JSON))
        assert record["class"] == code and [q["question"] for q in record["questions"]] == [1]
        (question,) = record["questions"]
        assert question["revealed"] and len(question["guesses"]) == 2
        assert sorted(g["who"] for g in question["guesses"]) == ["student 1", "student 2"]
        assert all(g["points"] >= 0 and g["rank"] >= 1 and 0 < g["probability"] <= 1 for g in question["guesses"])
        assert [r["round"] for r in record["rounds"]] == [1, 2]
        assert [len(r["draws"]) for r in record["rounds"]] == [2, 2]
        assert all(sum(b["count"] for b in r["tree"] if len(b["path"]) == 1) == 2 for r in record["rounds"])
        assert not any(typed in json.dumps(record) for typed in GUESSES)
        _shot(teacher, "projector-end-confirm.png")
        _click(teacher, teacher.get_by_role("button", name=text.END_SURE))
        phone.get_by_text(text.CLASS_GONE).first.wait_for(timeout=30_000)
    except Exception:
        teacher.screenshot(path=str(SHOTS / "failed-teacher.png"))
        raise
    finally:
        for other in others:
            other.close()
        ctx.close()
