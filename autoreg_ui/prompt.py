"""The prompt box: what the learner typed survives page changes, and a bad prompt never loses the text.

Streamlit forgets the value of a widget that a page did not draw, so the box's value is copied to
a durable key on every change (``keys.PROMPT_KEPT``) and copied back when the box is drawn again.
The callbacks take the state as a mapping, so tests pass a dict.
"""
from __future__ import annotations

from collections.abc import MutableMapping

import streamlit as st

from autoreg_ui import family_text, keys
from autoreg_ui.lesson_path_text import PROMPT_FOLDED
from autoreg_ui.sharing import presenter
from autoreg_ui.state import (
    DEFAULT_PROMPT,
    EXAMPLE_PROMPTS,
    current_bundle,
    current_session,
    kept_prompt,
    start_session,
)


def restore(state: MutableMapping) -> None:
    """Durable values first (defaults on a first visit), then the widgets start from them."""
    state.setdefault(keys.PROMPT_KEPT, DEFAULT_PROMPT)
    state.setdefault(keys.CHAT_KEPT, False)
    state.setdefault(keys.PROMPT_BOX, state[keys.PROMPT_KEPT])
    state.setdefault(keys.CHAT_BOX, state[keys.CHAT_KEPT])


def keep_prompt(state: MutableMapping) -> None:
    state[keys.PROMPT_KEPT] = state[keys.PROMPT_BOX]


def keep_chat(state: MutableMapping) -> None:
    state[keys.CHAT_KEPT] = state[keys.CHAT_BOX]


def settle_chat(state: MutableMapping, has_chat_template: bool) -> None:
    """A model without a chat template cannot be prompted in chat mode: the switch is turned off (and drawn
    disabled), so a choice left by another model or a link cannot make every prompt fail."""
    if not has_chat_template:
        state[keys.CHAT_KEPT] = state[keys.CHAT_BOX] = False


def pick_example(state: MutableMapping) -> None:
    state[keys.PROMPT_KEPT] = state[keys.PROMPT_BOX] = state[keys.EXAMPLE_BOX]


def prompt_box(folded: bool = False):
    """Draw the prompt controls and return this tab's session (started from the kept prompt if needed).

    ``folded``: in a closed expander (as on a projector), so the step's result is on the first screen."""
    state = st.session_state
    restore(state)
    bundle = current_bundle()
    chat_ok = bundle is None or bundle.has_chat_template
    settle_chat(state, chat_ok)
    # on a projector the step comes first: the prompt box folds away
    with st.expander(PROMPT_FOLDED) if presenter.active() or folded else st.container(border=True):
        left, right = st.columns([3, 1])
        left.text_area("Prompt", key=keys.PROMPT_BOX, on_change=keep_prompt, args=(state,), height=80)
        right.selectbox("Examples", EXAMPLE_PROMPTS, key=keys.EXAMPLE_BOX, on_change=pick_example, args=(state,),
                        index=None, placeholder="Pick an example…")
        right.toggle("Chat mode", key=keys.CHAT_BOX, on_change=keep_chat, args=(state,), disabled=not chat_ok,
                     help=family_text.CHAT_HELP if chat_ok else family_text.chat_off(bundle.name))
        right.button("Start from this prompt", key=keys.APPLY_PROMPT, on_click=lambda: start_session(*kept_prompt()))
    session = current_session() or start_session(*kept_prompt())
    if session is not None and (session.prompt, session.chat) != kept_prompt():
        st.info("The prompt box differs from the prompt being generated from. Press **Start from this "
                f"prompt** to restart from it (this clears the {len(session.records)} generated tokens).")
    return session
