"""Next token / Generate N / Undo / Reset: the same buttons on every page that steps."""
from __future__ import annotations

from typing import Callable

import streamlit as st

from autoreg_core import SessionError

from . import keys, messages
from .state import current_config, current_session, session_or_start

NEXT_SHORTCUT = "N"
MAX_GENERATE = 512


def _on_session(action: Callable, *args, start: bool = False) -> None:
    """Run ``action(session, *args)``; a refused step becomes a message, never an exception."""
    session = session_or_start() if start else current_session()
    if session is None:
        return
    try:
        action(session, *args)
    except SessionError as exc:
        messages.say(str(exc))


def next_token(capture_attention: bool = False) -> None:
    _on_session(lambda s: s.step(current_config(), capture_attention=capture_attention), start=True)


def force(token: int | str, capture_attention: bool = False) -> None:
    """Append this token instead of a drawn one (an id from a chart, or text typed by the learner)."""
    _on_session(lambda s: s.force(token, current_config(), capture_attention=capture_attention), start=True)


def undo() -> None:
    def _undo(session):
        if session.undo() is None:
            messages.say("Nothing to undo: no token has been generated yet.", "info")
    _on_session(_undo)


def reset() -> None:
    _on_session(lambda s: s.reset())


def generate(n: int, capture_attention: bool = False, on_step: Callable | None = None) -> None:
    """Up to ``n`` steps with a progress bar; ``on_step(record)`` may redraw as tokens arrive."""
    session = session_or_start()
    if session is None:
        return
    n = max(1, min(int(n), MAX_GENERATE))
    start = len(session.records)
    bar = st.progress(0.0, text=f"Generating up to {n} tokens…")

    def progress(record) -> None:
        bar.progress(min(1.0, (record.index - start) / n), text=f"step {record.index}")
        if on_step is not None:
            on_step(record)

    _on_session(lambda s: s.generate(n, current_config(), capture_attention=capture_attention,
                                     on_step=progress))
    bar.empty()


def step_buttons(page: str, capture_attention: bool = False, with_generate: bool = True) -> int | None:
    """Next token (key N) · Generate N · Undo · Reset in one row; ``page`` keeps widget ids unique.

    Returns N when Generate was pressed (the caller runs ``generate`` where the progress bar belongs).
    """
    cols = st.columns([1.2, 1, 1.2, 0.8, 0.8] if with_generate else [1.2, 0.8, 0.8], vertical_alignment="bottom")
    cols[0].button("Next token", key=f"{page}_next", type="primary", on_click=next_token,
                   kwargs={"capture_attention": capture_attention}, shortcut=NEXT_SHORTCUT,
                   help="One decode step: pick a token, feed it in, the KV cache grows by one row. Key: N")
    pressed = None
    if with_generate:
        n = cols[1].number_input("N", min_value=1, max_value=MAX_GENERATE, value=10, key=f"{page}_{keys.GENERATE_N}")
        if cols[2].button(f"Generate {n}", key=f"{page}_generate"):
            pressed = int(n)
    cols[-2].button("Undo", key=f"{page}_undo", on_click=undo,
                    help="Drop the last token: the cache is cropped by one row, nothing is recomputed.")
    cols[-1].button("Reset", key=f"{page}_reset", on_click=reset, help="Back to the prompt alone.")
    return pressed
