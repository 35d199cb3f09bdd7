"""A button whose action waits for a second, explicit press: ending a class or leaving one cannot be undone, so a
mis-tap only asks."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Confirmed:
    """The labels and widget keys of one confirmed action (``flag``: the session key that holds "asked")."""

    flag: str
    ask: str
    ask_key: str
    warning: str
    sure: str
    sure_key: str
    stay: str
    stay_key: str
    ask_type: str = "secondary"


def confirmed(action: Confirmed) -> bool:
    """Draw the first button, or the warning with its two answers; True on the run the action is confirmed."""
    state = st.session_state
    if not state.get(action.flag):
        if st.button(action.ask, key=action.ask_key, type=action.ask_type):
            state[action.flag] = True
            st.rerun()
        return False
    st.warning(action.warning)
    sure, stay = st.columns(2)
    if stay.button(action.stay, key=action.stay_key, type="primary"):
        state.pop(action.flag, None)
        st.rerun()
    if sure.button(action.sure, key=action.sure_key):
        state.pop(action.flag, None)
        return True
    return False
