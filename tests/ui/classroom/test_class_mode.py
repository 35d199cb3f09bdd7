"""Who a tab is in a class (class_mode reads and keeps its address; class_live answers who it is); plain dicts
stand in for Streamlit's state and query."""
import pytest

from autoreg_server import live_classes
from autoreg_ui import keys
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import mode as class_mode
from autoreg_ui.classroom.student import draw_seed


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOREG_CLASS_DB", str(tmp_path / "classes.sqlite3"))
    live_classes.reset_for_tests()
    yield class_mode.store()
    live_classes.reset_for_tests()


def test_the_teachers_key_and_a_students_seat_come_from_the_address(store):
    code, key = store.create()
    seat = store.join(code, "Ann")
    teacher, student, forged = {}, {}, {}
    wrong = key[:-1] + ("y" if key.endswith("x") else "x")  # one character off, never the key itself
    class_mode.read_link(teacher, {"class": code.lower(), "key": key})
    class_mode.read_link(student, {"class": code, "seat": seat})
    class_mode.read_link(forged, {"class": code, "key": wrong, "seat": "made-up"})
    assert (teacher[keys.CLASS_CODE], teacher[keys.CLASS_KEY]) == (code, key) and keys.CLASS_SEAT not in teacher
    assert student[keys.CLASS_SEAT] == seat and keys.CLASS_KEY not in student
    assert keys.CLASS_KEY not in forged and keys.CLASS_SEAT not in forged
    assert [level for level, _ in forged[keys.MESSAGES]] == ["error"]  # refused, with a message
    class_mode.read_link(forged, {"class": code, "key": wrong})
    assert len(forged[keys.MESSAGES]) == 1  # said once per key
    assert class_live.is_teacher(teacher) and not class_live.is_student(teacher)
    assert class_live.is_follower(student) and not class_live.is_teacher(forged)


def test_a_removed_students_address_says_so_and_drops_the_seat_and_a_seated_one_stays(store):
    from autoreg_ui.classroom import text as class_text

    code, key = store.create()
    removed, kept = store.join(code, "Ann"), store.join(code, "Bob")
    store.remove(code, key, removed)
    gone, still = {}, {}
    gone_query, still_query = {"class": code, "seat": removed}, {"class": code, "seat": kept}
    class_mode.read_link(gone, gone_query)
    class_mode.read_link(still, still_query)
    assert keys.CLASS_SEAT not in gone and "seat" not in gone_query
    assert [(level, said) for level, said in gone[keys.MESSAGES]] == [("warning", class_text.REMOVED_YOU)]
    assert still[keys.CLASS_SEAT] == kept and still_query["seat"] == kept and keys.MESSAGES not in still


def test_the_address_keeps_the_tabs_place_and_leaving_clears_it():
    state = {keys.CLASS_CODE: "ABC234", keys.CLASS_SEAT: "s1"}
    query = {"class": "ABC234", "key": "stale", "prompt": "Hi"}
    class_mode.keep_in_url(state, query)
    assert query == {"class": "ABC234", "seat": "s1", "prompt": "Hi"}
    class_live.leave(state, query)
    assert query == {"prompt": "Hi"} and state == {}
    untouched = {"key": "x"}
    class_mode.keep_in_url({}, untouched)  # a tab in no class leaves the address alone
    assert untouched == {"key": "x"}
    assert class_mode.wants_class_page({"class": "abc-234"}) and not class_mode.wants_class_page({"class": "--"})


def test_each_student_draws_with_a_seed_of_their_own_per_round():
    seeds = {draw_seed(seat, rid) for seat in ("a", "b", "c") for rid in (1, 2)}
    assert len(seeds) == 6 and draw_seed("a", 1) == draw_seed("a", 1)


def test_the_moved_on_note_shows_only_while_the_class_is_at_the_stop_where_the_round_started():
    from autoreg_ui.classroom.student import moved_on_note

    stop_3 = {"number": 3, "total": 9, "title": "Attention", "page": "attention", "params": [["prompt", "Hi"]]}
    stop_4 = {"number": 4, "total": 9, "title": "The cache", "page": "attention", "params": [["prompt", "Hi"]]}
    assert moved_on_note(stop_3, stop_3) is True  # still at the round's stop
    assert moved_on_note(stop_3, {**stop_3, "params": [["prompt", "Hi"]]}) is True  # the same stop, read again
    assert moved_on_note(stop_3, stop_4) is False  # the teacher went on: no note, for a student who joins there too
    assert moved_on_note(stop_4, stop_3) is False  # a round started further on, the teacher back at an earlier stop
    assert moved_on_note(stop_3, None) is False  # the teacher left the path
    assert moved_on_note(None, stop_3) is False  # a round started off a path, the class on one now
    assert moved_on_note(None, None) is True  # off a path throughout: shown while the round is open
