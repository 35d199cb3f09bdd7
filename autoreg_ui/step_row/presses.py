"""Every press of the step row counts, however fast: the browser keeps a running log of presses, the server
applies the part it has not applied yet.

Streamlit merges the button triggers of reruns that queue behind a running script into one, so ten quick
presses of Next token could run as six. A small component (``presses.js``, Streamlit's components v2, in the
page, no iframe) catches the clicks on Next token, Generate N and Undo and the keys N, G and U before
Streamlit's buttons do, numbers them, and sends the log as one state value: a merged rerun still carries every
press. The server keeps the number it has applied per row (``applied_key``) in the session, so a rerun never
applies a press twice, and sends it back, so the row can say how many presses are still to run.

Generate N runs where the page draws its progress bar, not in a callback: its press waits in the row's queue
(``queue_key``), and so does every press after it, so they still run in the order they were made. The page
takes the queued presses at its step row (``take_generate``): Next token and Undo run there, a Generate is
returned for the page to run, and what is left waits for the rerun asked for when it ends (``generate_ended``).
A press made while a Generate runs reruns the page, which stops the script mid-Generate; the rerun first takes
the Generate on to its goal (``GENERATING``: the token count it was to reach), so the press cuts nothing short.
The goal, not a count of steps left, because the stopped script's thread can still be in a step when the rerun
begins: both stop at the goal (``Session.generate``'s ``should_stop``, checked with each step under its lock).

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
KINDS = ("next", "undo", "generate")
PAGE_RUNS = "generate"  # a kind the page runs itself (with its progress bar): queued, never run in a callback
GENERATING = "step_row__generating"  # [row key, goal, text] of a running Generate: the count when it ends, of what


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


QUEUE_SUFFIX = "__queued"


def queue_key(key: str) -> str:
    return f"{key}{QUEUE_SUFFIX}"


def _held(state: Mapping) -> tuple | None:
    held = state.get(GENERATING)
    ok = isinstance(held, list | tuple) and len(held) == 3 and isinstance(held[1], int)
    return tuple(held) if ok else None


def generating(state: Mapping, key: str, text: object = None) -> int | None:
    """How many generated tokens the text is to have when the Generate this row handed its page ends (None: no
    Generate of this row is running, or, given ``text``, it was for another text: a new prompt or model)."""
    held = _held(state)
    if held is None or held[0] != key or (text is not None and held[2] is not text):
        return None
    return held[1]


def target(state: Mapping, text: object) -> int | None:
    """The running Generate's goal (tokens in ``text`` when it ends), whichever row handed it out; None when it
    is not for ``text``."""
    held = _held(state)
    return held[1] if held is not None and held[2] is text else None


def routed(state: MutableMapping, key: str, actions: Mapping[str, Callable[[], None]]) -> dict[str, Callable]:
    """What each kind of press does when it arrives: Next token and Undo run at once unless a Generate runs or
    waits before them; a Generate waits for the page (``take_generate``), whatever comes after it behind it."""
    def press(kind: str) -> None:
        queued = state.setdefault(queue_key(key), [])
        if kind == PAGE_RUNS or queued or generating(state, key) is not None:
            queued.append(kind)
        else:
            actions[kind]()
    return {kind: (lambda kind=kind: press(kind)) for kind in KINDS}


def take_generate(state: MutableMapping, key: str, actions: Mapping[str, Callable[[], None]], n: int,
                  have: Callable[[], int], text: Callable[[], object]) -> int:
    """How many steps of Generate the page runs now (0: none), running the queued presses before it; ``have()``:
    the tokens the text has now (read after those presses ran); ``text()``: the text itself (its session).

    A Generate cut short goes on first, to its goal: a press that arrives while it runs reruns the page, which
    stops the script mid-Generate. Otherwise the queue runs in order up to its first Generate, which is taken
    (``n`` steps, the row's N; its goal ``have() + n``). A Generate of a text since replaced (a new prompt, model
    or link) is dropped, and the presses queued behind it run on the new text; a Generate of a page left behind
    is dropped with the presses queued behind it.
    """
    held = state.get(GENERATING)
    goal = generating(state, key, text())
    if held is not None and goal is None:  # its page was left, or its text replaced, mid-Generate: it ends
        state.pop(GENERATING, None)
        if isinstance(held, list | tuple) and held and held[0] != key:  # a page left: its queue ends too
            state[queue_key(str(held[0]))] = []
    if goal is not None:
        if (left := goal - have()) > 0:
            return left
        state.pop(GENERATING, None)  # the stopped run had reached its goal after all
    queued = list(state.get(queue_key(key)) or [])
    while queued:
        kind = queued.pop(0)
        if kind == PAGE_RUNS:
            state[queue_key(key)] = queued
            state[GENERATING] = [key, int(have()) + int(n), text()]
            return int(n)
        if kind in actions:
            actions[kind]()
    state[queue_key(key)] = queued
    return 0


def generate_ended(state: MutableMapping) -> bool:
    """The running Generate is over (done or refused); True when presses made meanwhile
    wait in its row's queue (the page reruns to take them)."""
    held = state.pop(GENERATING, None)
    return bool(isinstance(held, list | tuple) and held and state.get(queue_key(held[0])))


def drop_waiting(state: MutableMapping) -> None:
    """Forget the rest of a running Generate and every queued press (Reset: the text goes back to its prompt, what
    was pressed before it is moot)."""
    state.pop(GENERATING, None)
    for name in [name for name in state.keys() if str(name).endswith(QUEUE_SUFFIX)]:
        state[name] = []


def press_counter(key: str, button_keys: Mapping[str, str], actions: Mapping[str, Callable[[], None]]) -> None:
    """Mount the counter for one step row (``button_keys``: kind → the Streamlit button's key; ``actions``:
    kind → what a press does; Generate's press only queues, see ``take_generate``)."""
    def on_log() -> None:
        value = st.session_state.get(key)
        apply(st.session_state, key, value.get("log") if isinstance(value, Mapping) else None,
              routed(st.session_state, key, actions))

    data = {"row": key, "epoch": _epoch(st.session_state, key),
            "applied": int(st.session_state.get(applied_key(key), 0)),
            "queued": len(st.session_state.get(queue_key(key)) or []),
            "keys": dict(button_keys), "one": text.PENDING_ONE, "many": text.PENDING_MANY}
    _component()(key=key, on_log_change=on_log, width="stretch", height="content", data=data)
