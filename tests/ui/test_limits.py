"""Operator limits as a tab meets them: the class-is-full page, the caps in the app."""
import pytest
from streamlit.testing.v1 import AppTest

from autoreg_server import seats as server_seats
from autoreg_server.seats import Limits, Seats
from autoreg_ui import limits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def shared(monkeypatch):
    """Replace the server's seats for one test."""
    def install(seats: Seats) -> Seats:
        monkeypatch.setattr(server_seats, "_shared", seats)
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

