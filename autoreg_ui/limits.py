"""Operator limits for a classroom server, as a tab meets them: its seat, and the per-tab caps.

The seats themselves (how many, which tab holds one, idle tabs freed) are the server's (``autoreg_server.seats``);
this module admits each script run's tab (``gate``), draws the class-is-full page for a tab that finds every seat
taken, and reads the caps that bound what one tab can ask for: new tokens per generation, and the longest length
of the cost page's race.

Every setting is an environment variable (the operators' table, ``docs/settings.md``):

- ``AUTOREG_MAX_SESSIONS`` (30): seats, the tabs served at once; 0 = no cap.
- ``AUTOREG_IDLE_MINUTES`` (20): a tab idle this long loses its seat and its generation; 0 = never.
- ``AUTOREG_MAX_NEW_TOKENS`` (512): cap on max new tokens and on Generate N, per tab.
- ``AUTOREG_MAX_RACE_LENGTH`` (2048): cap on the longest length of the naive-vs-cache race, per tab
  (the default is the race's longest choice; lower it on a busy server: a naive step at 2,048 tokens
  costs seconds of CPU).
"""
from __future__ import annotations

from autoreg_server import seats as server_seats
from autoreg_server.seats import Seats

FULL_TITLE = "The class is full"


def _streamlit_is_alive(session_id: str) -> bool:
    from streamlit import runtime

    if not runtime.exists():  # AppTest and bare mode: no runtime to ask
        return True
    return runtime.get_instance().is_active_session(session_id)


def shared_seats() -> Seats:
    """The server's seats, whose tabs Streamlit says are alive or not."""
    return server_seats.shared_seats(is_alive=_streamlit_is_alive)


def max_new_tokens() -> int:
    return shared_seats().limits.max_new_tokens


def max_race_length() -> int:
    return shared_seats().limits.max_race_length


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def hold(session) -> None:
    """Called when this tab starts an autoreg ``Session`` (``state.start_session``)."""
    sid = _session_id()
    if sid is not None:
        shared_seats().hold(sid, session)


def keep_for_lesson(on_path: bool = True) -> None:
    """This tab follows a lesson path (``lesson_path``): the idle limit leaves it alone."""
    sid = _session_id()
    if sid is not None:
        shared_seats().keep_for_lesson(sid, on_path)


def gate() -> None:
    """First thing on every run (``app.py``): admit this tab, or show the class-is-full page and stop."""
    import streamlit as st

    from autoreg_ui import keys

    sid = _session_id()
    if sid is None:
        return
    seats = shared_seats()
    admission = seats.admit(sid)
    if admission.admitted:
        if admission.returning_after_idle:
            st.info(f"You were away for more than {seats.limits.idle_minutes:g} minutes, so this tab's "
                    "generation was cleared to free the server's memory for the class. Start again below.")
        return
    st.title(FULL_TITLE)
    st.markdown(f"This server takes **{seats.limits.max_sessions} students at once**, and every seat is "
                "taken right now. A seat frees up as soon as someone closes their tab, or after "
                f"{seats.limits.idle_minutes:g} minutes without a click. **Try again in a minute.**")
    st.button("Try again", key=keys.CLASS_FULL_RETRY, type="primary")
    st.caption("For the operator: the number of seats is AUTOREG_MAX_SESSIONS (see the README).")
    st.stop()
