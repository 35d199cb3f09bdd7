"""One channel for what the app has to tell the learner: say it now, show it at the next redraw.

Callbacks run before the page is drawn, so they cannot draw; they ``say`` instead, and the page
calls ``show`` where the message belongs. Every text is shown as plain text (never HTML).
"""
from __future__ import annotations

import re
from collections.abc import MutableMapping

from autoreg_ui import keys

LEVELS = ("info", "success", "warning", "error")


def say(text: str, level: str = "warning", state: MutableMapping | None = None) -> None:
    """Queue a message (``state`` defaults to ``st.session_state``; tests pass a dict)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    state = _state(state)
    queue = list(state.get(keys.MESSAGES, []))
    if (level, text) not in queue:
        queue.append((level, str(text)))
    state[keys.MESSAGES] = queue


def take(state: MutableMapping | None = None) -> list[tuple[str, str]]:
    """Every queued message, oldest first; the queue is emptied."""
    return list(_state(state).pop(keys.MESSAGES, []) or [])


def show(state: MutableMapping | None = None) -> None:
    """Draw the queued messages here, each as a Streamlit alert of its level, as plain text."""
    import streamlit as st

    for level, text in take(state):
        getattr(st, level)(plain(text))


# What Streamlit's Markdown (or its LaTeX) acts on anywhere: emphasis, code, links, headings, tables,
# strikethrough, HTML, math, and a colon that starts an :emoji: or a :colour[...] directive; and, at the
# start of a line only, list markers ("- ", "+ ", "1. "). A dot or dash elsewhere is left as it is.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#|~<>$]|:(?=[\w/+-]+[:\[]))")
_LIST_MARKER = re.compile(r"^(\s*)([-+]|\d+(?=\.))", re.MULTILINE)


def plain(text: str) -> str:
    """Backslash-escape every character Markdown could act on, so a message, a learner's text or a
    model's token shows exactly as written (the app's one Markdown escaper)."""
    escaped = _MARKDOWN.sub(r"\\\1", str(text))
    def unlist(m):
        return m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2))
    return _LIST_MARKER.sub(unlist, escaped)


def _state(state: MutableMapping | None) -> MutableMapping:
    if state is not None:
        return state
    import streamlit as st

    return st.session_state
