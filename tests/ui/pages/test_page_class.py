"""The Class page under AppTest on the tiny model: a teacher and students in separate tabs, one store file."""
import re

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from autoreg_ui import keys


@pytest.fixture
def class_db(class_app):
    """A fresh class file (``class_app`` in conftest)."""
    return class_app


def _tab(tiny_folder, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[keys.MODEL] = tiny_folder
    for name, value in (query or {}).items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _text(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "success")
                     for e in getattr(at, kind))


def _ok(at):
    assert not at.exception, at.exception
    return at


def _teacher_steps(teacher, n: int, back_to_class: bool = True) -> None:
    """The teacher presses Next token n times on the step page (then returns to the Class page)."""
    teacher.switch_page("pages/step.py")
    _ok(teacher.run())
    for _ in range(n):
        _ok(teacher.button(key="step_next").click().run())
    if back_to_class:
        teacher.switch_page("pages/class.py")
        _ok(teacher.run())


def test_a_class_round_from_start_to_reveal(class_db, tiny_folder):
    teacher = _tab(tiny_folder)
    teacher.session_state[keys.CFG_TEMPERATURE] = 0.0
    _ok(teacher.button(key=keys.CLASS_START).click().run())
    code, key = teacher.session_state[keys.CLASS_CODE], teacher.session_state[keys.CLASS_KEY]
    assert teacher.query_params["class"] == code and teacher.query_params["key"] == key
    assert code in _text(teacher) and f"/?class={code}" in _text(teacher)

    students = []
    for nick in ("<b>Ann</b>", "Bob", ""):
        s = _tab(tiny_folder, {"class": code})
        assert s.text_input(key=keys.CLASS_CODE_BOX).value == code
        s.text_input(key=keys.CLASS_NICK).input(nick)
        _ok(s.button(key=keys.CLASS_JOIN).click().run())
        assert s.session_state[keys.CLASS_SEAT] and s.query_params["seat"] == s.session_state[keys.CLASS_SEAT]
        assert "key" not in s.query_params
        students.append(s)
    assert "\\<b\\>Ann\\</b\\>" in _text(students[0])  # the nickname shows as text
    assert "3 joined · 3 following" in _text(_ok(teacher.run()))

    # the teacher steps on the step page; followers draw the teacher's tokens
    _teacher_steps(teacher, 3)
    ids = list(teacher.session_state[keys.SESSION].ids)
    for s in students:
        _ok(s.run())
        strip = _hall(s)["text"]["strip"]  # the teacher's text, token by token
        assert [int(t) for t in re.findall(r'title="position \d+ · id (\d+)', strip)] == ids
        assert strip.count('class="tok gen') == 3
    from autoreg_server import live_classes

    held = live_classes.shared().text(code)[1]
    assert list(held.ids) == ids

    # a question: three guesses, the reveal, each student's own score
    _ok(teacher.button(key=keys.CLASS_ASK).click().run())
    for s, guess in zip(students, ("the", "<script>alert(1)</script>", "cat sat")):
        _ok(s.run())
        s.text_input(key=keys.CLASS_GUESS).input(guess)
        _ok(s.button(key=keys.CLASS_GUESS_SEND).click().run())
    _ok(teacher.run())
    assert "Answers in: 3 of 3" in _text(teacher) and not teacher.metric  # the count once, not a big number too
    _ok(teacher.button(key=keys.CLASS_REVEAL).click().run())
    assert len(teacher.session_state[keys.SESSION].records) == 4  # the step was taken
    # by default the wall shows scored tokens and counts, never what a student typed
    counts = next(d.value for d in teacher.dataframe if "guesses" in d.value.columns)
    assert list(counts.columns) == ["scored token", "guesses", "model probability", "rank", "points each"]
    assert sum(counts["guesses"]) == 3 and list(counts["guesses"]) == sorted(counts["guesses"], reverse=True)
    shown = _text(teacher) + " ".join(str(d.value.to_dict()) for d in teacher.dataframe)
    assert "<script>" not in shown and "cat sat" not in shown and "alert" not in shown
    teacher.toggle(key="class_show_typed").set_value(True)
    _ok(teacher.run())  # the teacher's toggle: the guesses as typed, on this page only
    table = next(d.value for d in teacher.dataframe if "guess" in d.value.columns)
    assert len(table) == 3 and list(table["guess"]) == ["the", "<script>alert(1)</script>", "cat sat"]
    assert all(0 < p <= 1 for p in table["model probability"]) and all(r >= 1 for r in table["rank"])
    assert "student 1" in list(table["who"])  # names are off by default
    for s in students:
        _ok(s.run())
        assert "points" in _text(s) and "Your guess" in _text(s)
        assert "<script>" not in _text(s).replace("\\<script\\>", "")


def _class_with_students(tiny_folder, n: int, temperature: float = 0.0):
    teacher = _tab(tiny_folder)
    teacher.session_state[keys.CFG_TEMPERATURE] = temperature
    _ok(teacher.button(key=keys.CLASS_START).click().run())
    code = teacher.session_state[keys.CLASS_CODE]
    students = []
    for _ in range(n):
        s = _tab(tiny_folder, {"class": code})
        _ok(s.button(key=keys.CLASS_JOIN).click().run())
        students.append(s)
    return teacher, code, students


def _hall(at, part: str = "strip") -> dict:
    """The class feed's document a follower's page drew its view from (``hall``: components v2, read from
    the element's data: AppTest runs no JavaScript)."""
    import json

    from autoreg_ui.classroom import hall

    mounted = [json.loads(e.proto.json) for e in at.get("bidi_component") if e.key == hall.KEY + part]
    assert len(mounted) == 1, f"{len(mounted)} hall views of part {part}"
    return mounted[0]["doc"]


def _strip_ids(at) -> list[int]:
    strip = _hall(at)["text"]["strip"]
    return [int(t) for t in re.findall(r'title="position \d+ · id (\d+)', strip)]


def test_a_following_students_step_page_shows_the_teachers_text(class_db, tiny_folder):
    teacher, code, (student,) = _class_with_students(tiny_folder, 1)
    _teacher_steps(teacher, 2, back_to_class=False)
    student.switch_page("pages/step.py")
    _ok(student.run())
    ids = list(teacher.session_state[keys.SESSION].ids)
    assert _strip_ids(student) == ids and len(ids) == len(teacher.session_state[keys.SESSION].prompt_ids) + 2
    own = student.session_state[keys.SESSION] if keys.SESSION in student.session_state else None
    assert own is None or (own.cache is None and own.records == [])  # the follower's tab ran no model pass
    assert f"following your teacher (class {code})" in _text(student)
    assert not [b for b in student.button if b.key == "step_next"]  # no stepping of their own while following
    assert "greedy (temperature 0)" in _hall(student)["text"]["settings"]  # the teacher's settings
    # explore: their own session from exactly this point, the step page is theirs again
    _ok(student.button(key=keys.CLASS_EXPLORE).click().run())
    assert list(student.session_state[keys.SESSION].ids) == ids
    assert student.session_state[keys.CLASS_MODE] == "exploring"
    _ok(student.run())  # their own step page: their own buttons, and a way back to the class
    assert [b for b in student.button if b.key == "step_next"] and "taken over from class" in _text(student)
    _ok(student.button(key="step_next").click().run())
    assert len(student.session_state[keys.SESSION].ids) == len(ids) + 1  # their own step; the teacher's text stays
    assert list(teacher.session_state[keys.SESSION].ids) == ids
    _ok(student.button(key=keys.CLASS_FOLLOW).click().run())
    assert student.session_state[keys.CLASS_MODE] == "following" and _strip_ids(student) == ids


def test_guesses_stir_the_teacher_and_leave_followers_alone(class_db, tiny_folder):
    from autoreg_ui.classroom import mode as class_mode

    teacher, code, (ann, bob) = _class_with_students(tiny_folder, 2)
    _teacher_steps(teacher, 1)
    _ok(teacher.button(key=keys.CLASS_ASK).click().run())
    before = class_mode.store().pulse(code)
    _ok(ann.run())
    ann.text_input(key=keys.CLASS_GUESS).input("the")
    _ok(ann.button(key=keys.CLASS_GUESS_SEND).click().run())
    after = class_mode.store().pulse(code)
    assert after[0] == before[0] and after[1] == before[1] + 1  # version kept (followers), activity moved
    _ok(bob.run())
    assert bob.session_state[keys.CLASS_DRAWN] == after[0]


def test_everyone_samples_and_the_tree_counts_every_student(class_db, tiny_folder):
    from autoreg_core.experiments import continuation_tree as prefix_tree
    from autoreg_ui.classroom import mode as class_mode

    teacher, code, students = _class_with_students(tiny_folder, 3, temperature=1.0)
    _teacher_steps(teacher, 1)
    teacher.number_input(key=keys.CLASS_SAMPLE_TOKENS).set_value(4)
    teacher.slider(key=keys.CLASS_SAMPLE_TEMPERATURE).set_value(1.5)
    _ok(teacher.button(key=keys.CLASS_SAMPLE).click().run())
    rid = class_mode.store().info(code).open_round
    assert rid is not None
    for s in students:
        _ok(s.run())
    draws = class_mode.store().draws(code, rid)
    for s, d in zip(students, draws):
        assert f"Your tab drew \\(seed {d.seed}\\)" in _text(s)
    assert len(draws) == 3 and all(1 <= len(d.tokens) <= 4 for d in draws)
    assert len({d.seed for d in draws}) == 3  # each student its own seed
    _ok(teacher.run())
    table = [d.value for d in teacher.dataframe]
    branches = prefix_tree.merge([d.tokens for d in draws])
    assert sum(b.count for b in branches if b.depth == 1) == 3
    tree = next(c for c in teacher.get("plotly_chart") if "icicle" in c.proto.spec)
    assert '"values":[3,' in tree.proto.spec.replace(" ", "")  # the root holds every student's draw
    # a second round at another temperature: the rounds table compares them
    teacher.slider(key=keys.CLASS_SAMPLE_TEMPERATURE).set_value(0.0)
    _ok(teacher.button(key=keys.CLASS_SAMPLE).click().run())
    for s in students:
        _ok(s.run())
    _ok(teacher.run())
    rounds = teacher.dataframe[-1].value
    assert list(rounds["temperature"]) == [1.5, 0.0] and list(rounds["draws"]) == [3, 3]
    assert list(rounds["different first tokens"])[1] == 1  # greedy: everyone agrees
    assert table  # the first run drew tables too
    # a student cannot draw twice for a round, nor for a closed one
    with pytest.raises(Exception, match="already drawn"):
        class_mode.store().add_draw(code, students[0].session_state[keys.CLASS_SEAT],
                                    class_mode.store().info(code).open_round, [1], 1)
    _ok(teacher.button(key=keys.CLASS_SAMPLE_CLOSE).click().run())
    with pytest.raises(Exception, match="closed"):
        class_mode.store().add_draw(code, students[1].session_state[keys.CLASS_SEAT], rid, [1], 1)


def test_a_seat_open_in_two_tabs_shows_the_draw_the_other_tab_made_first(class_db, tiny_folder, monkeypatch):
    """A phone and a laptop on one seat draw at once: the tab whose draw the store refuses (the seat has one) shows
    the seat's draw, not a refusal."""
    from autoreg_ui.classroom import mode as class_mode

    teacher, code, (phone,) = _class_with_students(tiny_folder, 1, temperature=1.0)
    _teacher_steps(teacher, 1)
    _ok(teacher.button(key=keys.CLASS_SAMPLE).click().run())
    seat = phone.session_state[keys.CLASS_SEAT]
    laptop = _tab(tiny_folder, {"class": code, "seat": seat})
    store = class_mode.store()
    real, calls = store.draws, []

    def raced(*args):  # the laptop's first read comes before the phone's draw is stored
        calls.append(args)
        return [] if len(calls) == 1 else real(*args)

    _ok(phone.run())  # the phone draws
    rid = store.info(code).open_round
    (drawn,) = store.draws(code, rid)
    monkeypatch.setattr(store, "draws", raced)
    _ok(laptop.run())
    monkeypatch.setattr(store, "draws", real)
    shown = _text(laptop)
    assert f"Your tab drew (seed {drawn.seed})" in shown.replace("\\", "") and "could not draw" not in shown
    assert len(calls) >= 2  # the laptop did try to draw, and was refused by the store
    assert store.draws(code, rid) == [drawn]  # still the one draw


def test_a_student_tab_cannot_act_as_the_teacher(class_db, tiny_folder):
    teacher = _tab(tiny_folder)
    _ok(teacher.button(key=keys.CLASS_START).click().run())
    code = teacher.session_state[keys.CLASS_CODE]
    forged = _tab(tiny_folder, {"class": code, "key": "not-the-key"})  # the join link opens the Class page
    assert keys.CLASS_KEY not in forged.session_state
    assert "teacher key that is not this class's" in " ".join(e.value for e in forged.error)
    _ok(forged.run())
    assert "key" not in forged.query_params  # the refused key is dropped from the address
    assert not [b for b in forged.button if b.key in (keys.CLASS_ASK, keys.CLASS_REVEAL, keys.CLASS_END,
                                                      keys.CLASS_SAMPLE)]
    assert forged.text_input(key=keys.CLASS_CODE_BOX).value == code  # offered the join form, nothing more


def test_a_wrong_code_is_refused_with_a_message(class_db, tiny_folder):
    s = _tab(tiny_folder, {"class": "NOPE22"})
    assert "ended or expired" in _text(s)
    s.text_input(key=keys.CLASS_CODE_BOX).input("WRONG9")
    _ok(s.button(key=keys.CLASS_JOIN).click().run())
    assert "no open class" in " ".join(e.value for e in s.error)
    assert keys.CLASS_SEAT not in s.session_state


def test_wrong_codes_from_one_tab_are_slowed_and_none_gets_in(class_db, tiny_folder):
    from autoreg_server.class_store import ALPHABET, JOIN_FAILS_PER_MINUTE
    from autoreg_ui.classroom import mode as class_mode

    teacher = _tab(tiny_folder)
    _ok(teacher.button(key=keys.CLASS_START).click().run())
    code = teacher.session_state[keys.CLASS_CODE]
    guesser = _tab(tiny_folder)
    guesser.switch_page("pages/class.py")
    _ok(guesser.run())
    said = []
    for i in range(JOIN_FAILS_PER_MINUTE + 5):
        wrong = "".join(ALPHABET[(i + k) % len(ALPHABET)] for k in range(6))
        guesser.text_input(key=keys.CLASS_CODE_BOX).input(wrong if wrong != code else "ZZZZZZ")
        _ok(guesser.button(key=keys.CLASS_JOIN).click().run())
        said.append(" ".join(e.value for e in guesser.error))
    assert all("no open class" in s for s in said[:JOIN_FAILS_PER_MINUTE])
    assert all("Too many wrong class codes" in s for s in said[JOIN_FAILS_PER_MINUTE:])
    guesser.text_input(key=keys.CLASS_CODE_BOX).input(code)  # even the right code waits while slowed
    _ok(guesser.button(key=keys.CLASS_JOIN).click().run())
    assert "Too many wrong class codes" in " ".join(e.value for e in guesser.error)
    assert keys.CLASS_SEAT not in guesser.session_state and class_mode.store().students(code) == []


def _chart_step(at) -> str | None:
    """The follower's caption over the last step's chart (None: no chart drawn)."""
    step = _hall(at, "step")["text"]["step"]
    return None if step is None else step["caption"]


def test_followers_see_the_teachers_undo_reset_and_new_prompt_through_the_drawn_memo(class_db, tiny_folder):
    """The strip and the chart are built once per class text in the process (``class_live.memo``): every change
    of the teacher's text must still reach the follower, whole sequence and length, and the chart's step."""
    from autoreg_server import live_classes
    from autoreg_ui.classroom import text as class_text

    teacher, code, (ann, bob) = _class_with_students(tiny_folder, 2)
    _teacher_steps(teacher, 3, back_to_class=False)

    def both_follow(generated: int) -> list[int]:
        ids = list(teacher.session_state[keys.SESSION].ids)
        prompt_len = len(teacher.session_state[keys.SESSION].prompt_ids)
        assert len(ids) == prompt_len + generated
        for s in (ann, bob):
            _ok(s.run())
            assert _strip_ids(s) == ids
            caption = _chart_step(s)
            if generated:
                assert caption == class_text.LAST_STEP_CHART.format(n=generated)
            else:
                assert caption is None  # back at the prompt: no step to chart
        return ids

    three = both_follow(3)
    built = live_classes.shared().memo_size()
    _ok(ann.run())  # a redraw of the same text builds nothing new
    assert live_classes.shared().memo_size() == built
    _ok(teacher.button(key="step_undo").click().run())
    assert both_follow(2) == three[:-1]
    _ok(teacher.button(key="step_next").click().run())
    assert both_follow(3) == three  # greedy: the same third token again, drawn from the memo's first entry
    _ok(teacher.button(key="step_reset").click().run())
    both_follow(0)
    teacher.text_area(key=keys.PROMPT_BOX).input("Once upon a time").run()
    _ok(teacher.button(key=keys.APPLY_PROMPT).click().run())
    for _ in range(3):
        _ok(teacher.button(key="step_next").click().run())
    fresh = both_follow(3)
    assert fresh[:len(three) - 3] != three[:len(three) - 3]  # another prompt: other text, same step count


def test_after_a_restart_no_teacher_tab_says_it_leads_until_one_acts(class_db, tiny_folder):
    from autoreg_server import live_classes
    from autoreg_ui.classroom import text as class_text

    teacher, code, _ = _class_with_students(tiny_folder, 0)
    key = teacher.session_state[keys.CLASS_KEY]
    assert class_text.THIS_TAB_LEADS in _text(_ok(teacher.run()))  # the tab that started the class leads it
    _teacher_steps(teacher, 1)
    live_classes.shared().forget_tabs()  # the server restarted: this process has seen no tab act
    second = _tab(tiny_folder, {"class": code, "key": key})
    for tab in (teacher, second):
        shown = _text(_ok(tab.run()))
        assert class_text.NO_TAB_LEADS_YET in shown and class_text.THIS_TAB_LEADS not in shown
    _teacher_steps(second, 1)
    assert class_text.THIS_TAB_LEADS in _text(_ok(second.run()))
    assert class_text.OTHER_TAB_LEADS in _text(_ok(teacher.run()))


def test_ending_the_class_asks_first_and_one_click_ends_nothing(class_db, tiny_folder):
    from autoreg_ui.classroom import mode as class_mode

    teacher, code, (student,) = _class_with_students(tiny_folder, 1)
    _ok(teacher.button(key=keys.CLASS_END).click().run())
    assert class_mode.store().info(code) is not None  # one click: still running, now asking
    assert "Download the class record first" in _text(teacher)
    assert {b.key for b in teacher.get("download_button")} >= {"class_record_csv", "class_record_json"}
    _ok(teacher.button(key="class_end_keep").click().run())
    assert class_mode.store().info(code) is not None and not [b for b in teacher.button if b.key == "class_end_sure"]
    _ok(teacher.button(key=keys.CLASS_END).click().run())
    _ok(teacher.button(key="class_end_sure").click().run())
    assert class_mode.store().info(code) is None and keys.CLASS_CODE not in teacher.session_state
    _ok(student.run())
    assert "ended or expired" in _text(student)


def test_a_revealed_question_leaves_the_students_page_when_the_text_moves_on(class_db, tiny_folder):
    teacher, code, (student,) = _class_with_students(tiny_folder, 1)
    _teacher_steps(teacher, 1)
    _ok(teacher.button(key=keys.CLASS_ASK).click().run())
    _ok(student.run())
    student.text_input(key=keys.CLASS_GUESS).input("the")
    _ok(student.button(key=keys.CLASS_GUESS_SEND).click().run())
    _ok(teacher.run())
    _ok(teacher.button(key=keys.CLASS_REVEAL).click().run())
    _ok(student.run())
    assert "The model drew" in _text(student) and "Your guess" in _text(student)
    _teacher_steps(teacher, 1)  # the teacher moves on
    _ok(student.run())
    assert "The model drew" not in _text(student) and "Your guess" not in _text(student)
    assert len(_strip_ids(student)) == len(teacher.session_state[keys.SESSION].ids)
