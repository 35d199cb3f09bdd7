"""Operator limits: seats with a cap, idle tabs freed (with a fake clock), caps, the class-is-full page."""
import pytest
from streamlit.testing.v1 import AppTest

from autoreg_core import SamplingConfig, Session
from autoreg_ui import limits
from autoreg_ui.limits import Limits, Seats


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeSession:
    def __init__(self) -> None:
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1


def test_limits_from_env_defaults_values_and_bad_values():
    assert Limits.from_env({}) == Limits(max_sessions=30, idle_minutes=20.0, max_new_tokens=512, max_race_length=2048)
    env = {limits.ENV_MAX_SESSIONS: "5", limits.ENV_IDLE_MINUTES: "0.5", limits.ENV_MAX_NEW_TOKENS: "64",
           limits.ENV_MAX_RACE_LENGTH: "256"}
    assert Limits.from_env(env) == Limits(max_sessions=5, idle_minutes=0.5, max_new_tokens=64, max_race_length=256)
    bad = {limits.ENV_MAX_SESSIONS: "many", limits.ENV_IDLE_MINUTES: "-3", limits.ENV_MAX_NEW_TOKENS: "0",
           limits.ENV_MAX_RACE_LENGTH: ""}
    assert Limits.from_env(bad) == Limits()
    assert Limits(idle_minutes=0).idle_seconds is None and Limits(idle_minutes=2).idle_seconds == 120.0


def test_seats_cap_refuses_the_next_tab_and_a_freed_seat_is_taken_again():
    seats = Seats(Limits(max_sessions=2), clock=Clock())
    assert [seats.admit(s).admitted for s in ("a", "b", "c")] == [True, True, False]
    assert seats.admit("a").admitted and seats.in_use == 2  # a seated tab keeps its seat
    seats.release("a")
    assert seats.admit("c") == limits.Admission(True, False, 2)
    assert not seats.admit("a").admitted


def test_no_cap_when_max_sessions_is_zero():
    seats = Seats(Limits(max_sessions=0), clock=Clock())
    assert all(seats.admit(str(i)).admitted for i in range(100)) and seats.in_use == 100


def test_an_idle_tab_loses_its_seat_and_its_generation_and_is_told_when_back():
    clock = Clock()
    seats = Seats(Limits(max_sessions=1, idle_minutes=10), clock=clock)
    assert seats.admit("away").admitted
    held = FakeSession()
    seats.hold("away", held)
    clock.now += 9 * 60
    assert not seats.admit("other").admitted  # still within the idle time: the seat is kept
    assert held.resets == 0
    clock.now += 2 * 60
    assert seats.admit("other") == limits.Admission(True, False, 1)  # the sweep freed the idle seat
    assert held.resets == 1
    seats.release("other")
    assert seats.admit("away") == limits.Admission(True, True, 1)  # back: told once
    assert seats.admit("away") == limits.Admission(True, False, 1)


def test_activity_keeps_a_seat():
    clock = Clock()
    seats = Seats(Limits(max_sessions=1, idle_minutes=1), clock=clock)
    for _ in range(5):
        assert seats.admit("busy").admitted
        clock.now += 50
    assert seats.sweep() == [] and seats.in_use == 1


def test_closed_tabs_give_their_seat_back_without_clearing():
    alive = {"gone": False, "here": True}
    seats = Seats(Limits(max_sessions=2, idle_minutes=0), clock=Clock(), is_alive=lambda sid: alive.get(sid, True))
    held = FakeSession()
    seats.admit("gone")
    seats.hold("gone", held)
    seats.admit("here")
    assert seats.admit("new").admitted and seats.in_use == 2
    assert held.resets == 0


def test_clearing_an_idle_session_returns_its_cache_and_records(tiny):
    clock = Clock()
    seats = Seats(Limits(idle_minutes=1), clock=clock)
    session = Session(tiny, "The cat sat")
    for _ in range(3):
        session.step(SamplingConfig(temperature=0))
    seats.admit("tab")
    seats.hold("tab", session)
    clock.now += 61
    assert seats.sweep() == ["tab"]
    assert session.records == [] and session.cache is None and session.ids == session.prompt_ids


def test_hold_is_weak():
    seats = Seats(Limits(), clock=Clock())
    seats.admit("tab")
    seats.hold("tab", FakeSession())  # dropped at once: the seat must not keep it alive
    assert len(seats._seats["tab"].sessions) == 0


@pytest.fixture
def shared(monkeypatch):
    """Replace the server's seats for one test."""
    def install(seats: Seats) -> Seats:
        monkeypatch.setattr(limits, "_shared", seats)
        return seats
    return install


def _gated_page():
    import streamlit as st

    from autoreg_ui import limits as lim
    from autoreg_ui.state import current_config

    lim.gate()
    st.title("The lesson")
    st.write(f"max new tokens {current_config().max_new_tokens}")


def test_a_full_class_gets_the_class_is_full_page(shared):
    seats = shared(Seats(Limits(max_sessions=1), clock=Clock()))
    seats.admit("somebody else")
    at = AppTest.from_function(_gated_page).run()
    assert [t.value for t in at.title] == [limits.FULL_TITLE]
    assert "1 students at once" in at.markdown[0].value
    assert [b.label for b in at.button] == ["Try again"]
    seats.release("somebody else")
    at.button[0].click().run()
    assert [t.value for t in at.title] == ["The lesson"]


def test_an_admitted_tab_sees_the_page_with_max_new_tokens_capped(shared):
    shared(Seats(Limits(max_sessions=3, max_new_tokens=8), clock=Clock()))
    at = AppTest.from_function(_gated_page).run()
    assert [t.value for t in at.title] == ["The lesson"]
    assert [m.value for m in at.markdown] == ["max new tokens 8"]


def test_the_app_itself_is_gated_and_caps_the_race_and_max_new_tokens(shared, open_page):
    """app.py calls the gate: a full class sees only the class-is-full page; an admitted tab gets the caps."""
    from autoreg_ui import keys
    from autoreg_ui.lessons.cost import keys as cost_keys

    seats = shared(Seats(Limits(max_sessions=1, max_new_tokens=8, max_race_length=100), clock=Clock()))
    seats.admit("somebody else")
    full = AppTest.from_file("../../app.py", default_timeout=120).run()
    assert [t.value for t in full.title] == [limits.FULL_TITLE] and not full.exception
    assert [b.label for b in full.button] == ["Try again"] and len(full.get("plotly_chart")) == 0
    seats.release("somebody else")
    cost = open_page("pages/cost.py")
    assert list(cost.select_slider(key=cost_keys.COST_MAX_LEN).options) == ["16", "32", "64"]
    capped = [i.value for i in cost.sidebar.info if "caps max new tokens at 8" in i.value]
    assert len(capped) == 1  # the default of 64 asks for more than the cap
    cost.sidebar.number_input(key=keys.CFG_MAX_NEW).set_value(8).run()
    assert [i.value for i in cost.sidebar.info if "caps max new tokens" in i.value] == []


def test_cleared_tabs_are_remembered_within_a_bound(monkeypatch):
    """Tabs that went idle and never came back are not kept forever: the oldest are forgotten first."""
    monkeypatch.setattr(limits, "MAX_CLEARED", 5)
    clock = Clock()
    seats = Seats(Limits(max_sessions=0, idle_minutes=1), clock=clock)
    for i in range(12):
        assert seats.admit(f"tab{i}").admitted
        clock.now += 2 * 60  # each goes idle before the next one arrives
        seats.sweep()
    assert list(seats._cleared) == [f"tab{i}" for i in range(7, 12)]
    assert seats.admit("tab11").returning_after_idle and not seats.admit("tab0").returning_after_idle  # tab0: forgotten


def test_a_tab_on_a_lesson_path_is_never_cleared_for_idling_but_still_freed_when_closed():
    clock, alive = Clock(), {"teacher": True, "student": True}
    seats = Seats(Limits(max_sessions=0, idle_minutes=20), clock=clock, is_alive=lambda sid: alive[sid])
    for sid in alive:
        assert seats.admit(sid).admitted
    teacher, student = FakeSession(), FakeSession()
    seats.hold("teacher", teacher)
    seats.hold("student", student)
    seats.keep_for_lesson("teacher")
    clock.now += 45 * 60  # a whole lesson at another stop
    assert seats.sweep() == ["student"]
    assert teacher.resets == 0 and student.resets == 1
    seats.keep_for_lesson("teacher", False)  # left the path: the idle limit applies again
    clock.now += 21 * 60
    assert seats.sweep() == ["teacher"] and teacher.resets == 1
    assert seats.admit("teacher").admitted
    seats.keep_for_lesson("teacher")
    alive["teacher"] = False
    assert seats.sweep() == [] and seats.in_use == 0  # closed: the seat goes back even on a path


def test_runs_sweep_at_most_once_a_second_but_at_once_before_a_refusal():
    """Each run of each tab admits it; the sweep looks at every seat, so it runs once per RUN_SWEEP_EVERY_S."""
    clock, looked = Clock(), []
    alive = {"gone": True}

    def is_alive(sid):
        looked.append(sid)
        return alive.get(sid, True)

    seats = Seats(Limits(max_sessions=3, idle_minutes=0), clock=clock, is_alive=is_alive)
    seats.admit("a")
    assert looked == []  # nobody seated yet at the first sweep
    seats.admit("b")
    clock.now += limits.RUN_SWEEP_EVERY_S - 0.01
    seats.admit("a")
    assert looked == []  # within the second: no sweep
    clock.now += 0.01
    seats.admit("a")
    assert sorted(looked) == ["a", "b"]  # a second after the first: one sweep over both seats
    looked.clear()
    seats.admit("gone")
    alive["gone"] = False  # closed; the class is now full (3 of 3)
    assert seats.admit("new").admitted and seats.in_use == 3  # swept at once, inside the second: its seat was free
    assert sorted(looked) == ["a", "b", "gone"]
