"""Every press of the step row counts, however fast: the browser keeps a running log of presses, the server
applies the part it has not applied yet.

Streamlit merges the button triggers of reruns that queue behind a running script into one, so ten quick
presses of Next token could run as six. A small component (``presses.js``, Streamlit's components v2, in the
page, no iframe) catches the clicks on Next token and Undo and the keys N and U before Streamlit's buttons do,
numbers them, and sends the log as one state value: a merged rerun still carries every press. The server keeps
the number it has applied per row (``applied_key``) in the session, so a rerun never applies a press twice,
and sends it back, so the row can say how many presses are still to run.

The Streamlit buttons stay what the learner sees and what a screen reader and ``AppTest`` press: a press that
reaches them (no JavaScript yet, or a test) runs through their own callbacks.
"""
from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, MutableMapping
from functools import cache
from pathlib import Path

import streamlit as st

from autoreg_ui.step_row import text

HERE = Path(__file__).parent
KINDS = ("next", "undo")


def applied_key(key: str) -> str:
    return f"{key}__applied"


def new_presses(log: object, epoch: str, applied: int) -> tuple[list[str], int]:
    """The presses in ``log`` not applied yet, oldest first, and the count applied after them.

    ``log``: ``{"epoch": …, "seq": …, "presses": [[number, kind], …]}`` as the browser sent it; anything else, a
    log from another session (``epoch``), or a kind not in ``KINDS`` is ignored (a stale or made-up value never
    runs an action). Numbers run 1, 2, 3… per row; only those above ``applied`` are new.
    """
    if not isinstance(log, Mapping) or log.get("epoch") != epoch or not isinstance(log.get("presses"), list):
        return [], applied
    fresh: list[str] = []
    last = applied
    for entry in log["presses"]:
        if not (isinstance(entry, list | tuple) and len(entry) == 2):
            continue
        number, kind = entry
        if isinstance(number, bool) or not isinstance(number, int) or kind not in KINDS:
            continue
        if number == last + 1:
            fresh.append(kind)
            last = number
    return fresh, last


@cache
def _component():
    return st.components.v2.component(
        "autoreg_presses", html='<span class="autoreg-pending" aria-live="polite"></span>',
        css=".autoreg-pending{font-size:.875rem;opacity:.75}", js=(HERE / "presses.js").read_text())


def _epoch(state: MutableMapping, key: str) -> str:
    return state.setdefault(f"{key}__epoch", secrets.token_hex(6))


def apply(state: MutableMapping, key: str, log: object, actions: Mapping[str, Callable[[], None]]) -> int:
    """Run the presses of ``log`` not yet applied, in order, and remember how many ran; returns how many ran."""
    applied = int(state.get(applied_key(key), 0))
    fresh, last = new_presses(log, _epoch(state, key), applied)
    for kind in fresh:
        actions[kind]()
        applied += 1
        state[applied_key(key)] = applied  # one at a time: an action that raises leaves the rest for later
    state[applied_key(key)] = last
    return len(fresh)


def press_counter(key: str, button_keys: Mapping[str, str], actions: Mapping[str, Callable[[], None]]) -> None:
    """Mount the counter for one step row (``button_keys``: kind → the Streamlit button's key; ``actions``:
    kind → what a press does)."""
    def on_log() -> None:
        value = st.session_state.get(key)
        apply(st.session_state, key, value.get("log") if isinstance(value, Mapping) else None, actions)

    data = {"row": key, "epoch": _epoch(st.session_state, key),
            "applied": int(st.session_state.get(applied_key(key), 0)),
            "keys": dict(button_keys), "one": text.PENDING_ONE, "many": text.PENDING_MANY}
    _component()(key=key, on_log_change=on_log, width="stretch", height="content", data=data)
