"""Where the app keeps things: one model per server, one session per browser tab."""
from __future__ import annotations

import streamlit as st

from autoreg_core import EMBEDDED_MODEL, ModelBundle, ModelLoadError, SamplingConfig, Session, SessionError, load_model

from . import keys, messages

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
    name = st.session_state.get(keys.MODEL, EMBEDDED_MODEL)
    try:
        return shared_bundle(name)
    except ModelLoadError as exc:
        st.error(str(exc))
        return None


def current_config() -> SamplingConfig:
    return st.session_state.get(keys.CONFIG) or SamplingConfig()


def current_session() -> Session | None:
    """This tab's session, if it belongs to the selected model."""
    session = st.session_state.get(keys.SESSION)
    bundle = current_bundle()
    if session is None or bundle is None or session.bundle is not bundle:
        return None
    return session


def kept_prompt() -> tuple[str, bool]:
    """The prompt and chat mode the learner last chose (kept across pages)."""
    return (st.session_state.get(keys.PROMPT_KEPT, DEFAULT_PROMPT),
            bool(st.session_state.get(keys.CHAT_KEPT, False)))


def start_session(prompt: str, chat: bool) -> Session | None:
    """A new session from the prompt box; a bad prompt gives a message and keeps the old session."""
    bundle = current_bundle()
    if bundle is None:
        return None
    try:
        session = Session(bundle, prompt, chat=chat)
    except SessionError as exc:
        messages.say(str(exc), "error")
        return None
    st.session_state[keys.SESSION] = session
    return session


def session_or_start() -> Session | None:
    """The current session, or one started from the kept prompt."""
    return current_session() or start_session(*kept_prompt())
