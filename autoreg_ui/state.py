"""Where the app keeps things: one model per server, one session per browser tab."""
from __future__ import annotations

import streamlit as st

from autoreg_core import (EMBEDDED_MODEL, ModelBundle, ModelLoadError, SamplingConfig, Session,
                          SessionError, load_model)

MODEL_KEY = "model_name"
CONFIG_KEY = "sampling_config"
SESSION_KEY = "session"
PROMPT_KEY = "prompt_text"
CHAT_KEY = "chat_mode"
DEFAULT_PROMPT = "The cat sat on the"
EXAMPLE_PROMPTS = [
    "The cat sat on the",
    "Once upon a time, in a small village,",
    "The capital of France is",
    "def fibonacci(n):",
    "Water boils at a temperature of",
    "To make a cup of tea, first",
]


@st.cache_resource(show_spinner="Loading the model (the very first start converts it, about 20 s)…")
def shared_bundle(name: str) -> ModelBundle:
    """Loaded once per server process and shared read-only by every tab."""
    return load_model(name)


def current_bundle() -> ModelBundle | None:
    """The selected model, or None after showing why it could not be loaded."""
    name = st.session_state.get(MODEL_KEY, EMBEDDED_MODEL)
    try:
        return shared_bundle(name)
    except ModelLoadError as exc:
        st.error(str(exc))
        return None


def current_config() -> SamplingConfig:
    return st.session_state.get(CONFIG_KEY) or SamplingConfig()


def current_session() -> Session | None:
    """This tab's session, if it belongs to the selected model."""
    session = st.session_state.get(SESSION_KEY)
    bundle = current_bundle()
    if session is None or bundle is None or session.bundle is not bundle:
        return None
    return session


def start_session(prompt: str, chat: bool) -> Session | None:
    """A new session from the prompt box; a bad prompt gives a message and keeps the old one."""
    bundle = current_bundle()
    if bundle is None:
        return None
    try:
        session = Session(bundle, prompt, chat=chat)
    except SessionError as exc:
        st.error(str(exc))
        return None
    st.session_state[SESSION_KEY] = session
    return session


def session_or_start() -> Session | None:
    """The current session, or one started from the prompt box's current text."""
    session = current_session()
    if session is None:
        session = start_session(st.session_state.get(PROMPT_KEY, DEFAULT_PROMPT),
                                bool(st.session_state.get(CHAT_KEY, False)))
    return session
