"""Where the app keeps things: one model per server, one session per browser tab.

The server is tuned for many tabs at once (measured in ``bench/click_cost.py`` and
``bench/classroom.py``): each tab's forward pass runs on one core (``AUTOREG_TORCH_THREADS``,
default 1), because every script thread that asks torch for all the cores oversubscribes the
machine as soon as two students click together; and once the model is loaded, everything alive is
moved out of the garbage collector's sight (``gc.freeze``), so the collections that still run walk
only what the tabs made since, not torch, transformers and the weights.
"""
from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import replace

import streamlit as st
import torch

from autoreg_core import EMBEDDED_MODEL, ModelBundle, ModelLoadError, SamplingConfig, Session, SessionError, load_model
from autoreg_core.engine import loading
from autoreg_core.runtime import batcher, prefix_cache
from autoreg_core.runtime.forward_slots import held, limit_concurrent_forwards
from autoreg_server import settings
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


def forward_slots(threads: int, wanted: int | None = None, cores: int | None = None) -> int:
    """Forward passes allowed at once: ``wanted`` (the operator's ``AUTOREG_FORWARD_SLOTS``; 0 = no limit), else
    cores ÷ threads (≥ 1). See ``runtime.forward_slots`` for why a server wants one."""
    if wanted is not None:
        return wanted
    return max(1, (cores or os.cpu_count() or 1) // max(1, threads))


def configure_torch() -> int:
    """Apply the thread count (process-wide in torch; script threads started later inherit it) and the
    number of forward passes that may run at once."""
    threads = settings.current().torch_threads
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    limit_concurrent_forwards(forward_slots(threads, settings.current().forward_slots))
    return threads


def allowed_models() -> list[str]:
    """The models a browser user may pick: the embedded one plus the operator's allowlist and models file."""
    served = settings.current()
    return loading.allowed_models(served.allowed_models, served.models_file or None)


def shared_bundle(name: str) -> ModelBundle:
    """Loaded once per server process and shared read-only by every tab; at most ``AUTOREG_MAX_MODELS`` stay
    loaded (a model picked after them pushes out the least recently used, reloaded in about a second)."""
    return bundle_cache(settings.current().max_models)(name)


@functools.cache
def bundle_cache(max_models: int) -> Callable[[str], ModelBundle]:
    """``load_shared`` behind Streamlit's resource cache, keeping at most ``max_models`` models (made on first
    use, when the operator's settings are read, not when this module is imported)."""
    return st.cache_resource(show_spinner="Loading the model (the very first start converts it, about 20 s)…",
                             max_entries=max(1, max_models))(load_shared)


def load_shared(name: str) -> ModelBundle:
    """Load a model the way the operator set the server up, with the runtime its tabs share."""
    configure_torch()
    served = settings.current()
    bundle = load_model(name, served.device or None, served.dtype or None, allowed=allowed_models(),
                        cache_folder=served.cache_dir or None)
    bundle.forward_gate = held  # every pass on the served model takes a forward slot (``runtime.forward_slots``)
    start_runtime(bundle, served)
    gc.collect()
    gc.freeze()  # long-lived from here on: later collections skip it (see the module docstring)
    return bundle


def start_runtime(bundle: ModelBundle, served: settings.Settings) -> None:
    """Make this model's batcher (when batching is on) and the shared prefix cache with the operator's sizes, so
    every later ``batcher_for`` and ``prefix_cache.shared`` gets these."""
    if served.batch:
        batcher.batcher_for(bundle, workers=served.batch_workers or None,
                            switch_interval_ms=served.switch_interval_ms)
    prefix_cache.shared(served.prefix_cache_bytes)


def session_runtime(bundle: ModelBundle) -> dict:
    """What the server hands every ``Session`` (and ``replay``) of ``bundle``: its batcher's step pass when
    cross-tab batching is on (else None: solo steps), and the shared prefix cache when it has room (else None)."""
    served = settings.current()
    store = prefix_cache.shared(served.prefix_cache_bytes)
    return {"step_pass": batcher.batcher_for(bundle).decode if served.batch else None,
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
    if chat and not bundle.has_chat_template:  # chat mode left by another model or a link: off, as its switch shows
        chat = st.session_state[keys.CHAT_KEPT] = False
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
