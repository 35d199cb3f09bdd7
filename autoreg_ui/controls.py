"""Next token / Undo / Reset, usable on any page so a teacher can step from where they are."""
from __future__ import annotations

import streamlit as st

from autoreg_core import SessionError

from .state import current_config, current_session, session_or_start

NEXT_SHORTCUT = "N"


def next_token(capture_attention: bool = False) -> None:
    """One decode step on this tab's session; any problem becomes a message."""
    session = session_or_start()
    if session is None:
        return
    try:
        session.step(current_config(), capture_attention=capture_attention)
    except SessionError as exc:
        st.session_state["step_message"] = str(exc)


def undo() -> None:
    session = current_session()
    if session is not None and session.undo() is None:
        st.session_state["step_message"] = "Nothing to undo: no token has been generated yet."


def reset() -> None:
    session = current_session()
    if session is not None:
        session.reset()


def step_buttons(key: str, capture_attention: bool = False, shortcut: bool = True) -> None:
    """Three buttons in a row. ``key`` keeps widget ids unique per page."""
    c1, c2, c3 = st.columns(3)
    c1.button("Next token", key=f"{key}_next", type="primary", on_click=next_token,
              kwargs={"capture_attention": capture_attention},
              shortcut=NEXT_SHORTCUT if shortcut else None,
              help="One decode step: pick a token, feed it in, the KV cache grows by one row. Key: N")
    c2.button("Undo", key=f"{key}_undo", on_click=undo,
              help="Drop the last token: the cache is cropped by one row, nothing is recomputed.")
    c3.button("Reset", key=f"{key}_reset", on_click=reset, help="Back to the prompt alone.")
    show_step_message()


def show_step_message() -> None:
    msg = st.session_state.pop("step_message", None)
    if msg:
        st.warning(msg)
