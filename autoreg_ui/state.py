"""Where the app keeps things: one model per server, one session per browser tab.

The server is tuned for many tabs at once (measured in ``bench/click_cost.py`` and
``bench/classroom.py``): each tab's forward pass runs on one core (``AUTOREG_TORCH_THREADS``,
default 1), because every script thread that asks torch for all the cores oversubscribes the
machine as soon as two students click together; and once the model is loaded, everything alive is
moved out of the garbage collector's sight (``gc.freeze``), so the collections that still run walk
only what the tabs made since, not torch, transformers and the weights.
"""
from __future__ import annotations

import gc
import os
from collections.abc import Iterable, MutableMapping
from dataclasses import replace

import streamlit as st
import torch

from autoreg_core import EMBEDDED_MODEL, ModelBundle, ModelLoadError, SamplingConfig, Session, SessionError, load_model
from autoreg_core.runtime import batcher, prefix_cache
from autoreg_core.runtime.forward_slots import held, limit_concurrent_forwards
from autoreg_ui import keys, limits, messages

DEFAULT_PROMPT = "The cat sat on the"
EXAMPLE_PROMPTS = [
    "The cat sat on the",
    "Once upon a time, in a small village,",
    "The capital of France is",
    "def fibonacci(n):",
    "Water boils at a temperature of",
    "To make a cup of tea, first",
]


ENV_TORCH_THREADS = "AUTOREG_TORCH_THREADS"
DEFAULT_TORCH_THREADS = 1


def torch_threads(environ=os.environ) -> int:
    """Intra-op threads for one forward pass: the operator's ``AUTOREG_TORCH_THREADS``, else 1."""
    try:
        return max(1, int(environ.get(ENV_TORCH_THREADS, DEFAULT_TORCH_THREADS)))
    except ValueError:
        return DEFAULT_TORCH_THREADS


ENV_FORWARD_SLOTS = "AUTOREG_FORWARD_SLOTS"


def forward_slots(threads: int, environ=os.environ, cores: int | None = None) -> int:
    """Forward passes allowed at once: the operator's ``AUTOREG_FORWARD_SLOTS``, else cores ÷ threads (≥ 1).

    0 means no limit. See ``runtime.forward_slots`` for why a server wants one.
    """
    default = max(1, (cores or os.cpu_count() or 1) // max(1, threads))
    try:
        value = int(environ.get(ENV_FORWARD_SLOTS, default))
    except ValueError:
        return default
    return value if value >= 0 else default


def configure_torch() -> int:
    """Apply the thread count (process-wide in torch; script threads started later inherit it) and the
    number of forward passes that may run at once."""
    threads = torch_threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    limit_concurrent_forwards(forward_slots(threads))
    return threads


MAX_MODELS = int(os.environ.get("AUTOREG_MAX_MODELS", "2") or 2)  # models kept loaded at once (the LRU goes)


@st.cache_resource(show_spinner="Loading the model (the very first start converts it, about 20 s)…",
                   max_entries=max(1, MAX_MODELS))
def shared_bundle(name: str) -> ModelBundle:
    """Loaded once per server process and shared read-only by every tab; at most ``MAX_MODELS`` stay
    loaded (a model picked after them pushes out the least recently used, reloaded in about a second)."""
    configure_torch()
    bundle = load_model(name)
    bundle.forward_gate = held  # every pass on the served model takes a forward slot (``runtime.forward_slots``)
    gc.collect()
    gc.freeze()  # long-lived from here on: later collections skip it (see the module docstring)
    return bundle


def session_runtime(bundle: ModelBundle) -> dict:
    """What the server hands every ``Session`` (and ``replay``) of ``bundle``: its batcher's step pass when
    cross-tab batching is on (else None: solo steps), and the shared prefix cache when it has room (else None)."""
    store = prefix_cache.shared()  # its budget is the operator's, read once
    return {"step_pass": batcher.batcher_for(bundle).decode if batcher.enabled() else None,
            "prefill_cache": store if store.budget > 0 else None}


def current_bundle() -> ModelBundle | None:
    """The selected model, or None after showing why it could not be loaded."""
    name = st.session_state.get(keys.MODEL, EMBEDDED_MODEL)
    try:
        return shared_bundle(name)
    except ModelLoadError as exc:
        st.error(str(exc))
        return None


def bundle_or_stop() -> ModelBundle:
    """The selected model; if it cannot be loaded, the page stops here (after ``current_bundle`` said why)."""
    bundle = current_bundle()
    if bundle is None:
        st.stop()
    return bundle


def current_config() -> SamplingConfig:
    """The sidebar's settings, with max new tokens held to the operator's cap (``limits``)."""
    config = st.session_state.get(keys.CONFIG) or SamplingConfig()
    cap = limits.max_new_tokens()
    return config if config.max_new_tokens <= cap else replace(config, max_new_tokens=cap)


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
        session = Session(bundle, prompt, chat=chat, **session_runtime(bundle))
    except SessionError as exc:
        messages.say(str(exc), "error")
        return None
    st.session_state[keys.SESSION] = session
    limits.hold(session)  # an idle tab's session is cleared to give its memory back
    return session


def session_or_start() -> Session | None:
    """The current session, or one started from the kept prompt."""
    return current_session() or start_session(*kept_prompt())


# ---------------------------------------------------------------- widget values kept (the one home)
def restore_widgets(state: MutableMapping, first_values: dict[str, object]) -> None:
    """Across pages: Streamlit forgets a widget another page did not draw; bring each back from its
    durable copy (``remember_widgets``), or to its first value."""
    for key, value in first_values.items():
        if key not in state:
            state[key] = state.get(key + keys.KEPT_SUFFIX, value)


def remember_widgets(state: MutableMapping, widget_keys: Iterable[str]) -> None:
    """Copy widget values to durable keys that outlive a page change (call after the widgets are drawn)."""
    for key in widget_keys:
        if key in state:
            state[key + keys.KEPT_SUFFIX] = state[key]


def keep_widget_values(state: MutableMapping, widget_keys: Iterable[str]) -> None:
    """Keep these widgets' values through runs that do not draw them (a closed tab or section).

    Streamlit forgets a widget's value after a run that did not draw it (it comes back at its first
    default); writing the value back during that run, before the widget is drawn, keeps it.
    """
    for key in widget_keys:
        if key in state:
            state[key] = state[key]
