"""Next token / Generate N / Undo / Reset: the same row of buttons on every page, each with a key.

Keys (Streamlit reserves C and R): N next token, G generate N, U undo, X reset, A the page's own "advance"
(draw again in the sampling lab, run the race on the cost page). A change to the session reaches the URL (and
a teacher's class) once, at the end of the run (``after_run``), so the address bar always holds a link that
rebuilds this moment. Presses of Next token, Generate N and Undo (and N, G, U) are counted in the browser and
applied in order however fast they come (``step_row.presses``): Streamlit alone merges the triggers of reruns
queued behind a run.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

from autoreg_core import SessionError
from autoreg_core.engine.session import FULL_LOGITS_KEPT
from autoreg_ui import guide, keys, limits, messages, predict
from autoreg_ui.classroom import live as class_live
from autoreg_ui.sharing import links, presenter
from autoreg_ui.state import current_config, current_session, session_or_start
from autoreg_ui.step_row import presses

NEXT_SHORTCUT, GENERATE_SHORTCUT, UNDO_SHORTCUT, RESET_SHORTCUT, ADVANCE_SHORTCUT = "N", "G", "U", "X", "A"
MAX_GENERATE = 512


@dataclass(frozen=True)
class Advance:
    """A page's own "next" (key A): a button label, its callback and the callback's arguments."""

    label: str
    on_click: Callable
    args: tuple = field(default_factory=tuple)
    help: str | None = None


def _on_session(action: Callable, *args, start: bool = False) -> None:
    """Run ``action(session, *args)``; a refused step becomes a message, never an exception. A teacher's change
    is published at once, before the page draws (the class sees it that much sooner; the end of the run then
    finds nothing new to publish)."""
    session = session_or_start() if start else current_session()
    if session is None:
        return
    try:
        action(session, *args)
    except SessionError as exc:
        messages.say(str(exc))
    class_live.publish(st.session_state, redraw=False)


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
    presses.drop_waiting(st.session_state)  # a Generate stopped by this press does not go on after it
    _on_session(lambda s: s.reset())


REDRAW_EVERY_S = 0.25  # while generating, the strip is redrawn at most this often (and after the last step)


def generate(n: int, capture_attention: bool = False, on_step: Callable | None = None) -> None:
    """Up to ``n`` steps with a progress bar; ``on_step(record)`` redraws the page as tokens arrive.

    ``on_step`` runs at most every ``REDRAW_EVERY_S`` and once after the last step: each redraw sends
    the whole strip to the browser, so redrawing on every one of 512 steps would send it 512 times.
    The operator's cap on new tokens (``limits.max_new_tokens``) bounds ``n``.
    """
    session = session_or_start()
    if session is None:
        return
    n = max(1, min(int(n), MAX_GENERATE, limits.max_new_tokens()))
    start = len(session.records)
    bar = st.progress(0.0, text=f"Generating up to {n} tokens…")
    last_redraw = [time.perf_counter()]

    def progress(record) -> None:
        now = time.perf_counter()
        done = record.index - start >= n or record.stop is not None
        if now - last_redraw[0] < REDRAW_EVERY_S and not done:
            return
        last_redraw[0] = now
        bar.progress(min(1.0, (record.index - start) / n), text=f"step {record.index}")
        if on_step is not None:
            on_step(record)

    # A counted press's Generate ends at its goal, whoever steps meanwhile: a press reruns the page while this
    # script's thread can still be stepping. It ends too when the goal is gone (Reset) or replaced.
    state = st.session_state
    goal = presses.target(state, session)
    reached = None if goal is None else (lambda: len(session.records) >= goal
                                         or presses.target(state, session) != goal)
    # A script stopped mid-Generate (Streamlit stops it to start the rerun a press asked for) keeps its goal: the
    # rerun goes on to it. Streamlit's own Stop looks the same from here, so Reset is what ends a Generate.
    _on_session(lambda s: s.generate(n, current_config(), capture_attention=capture_attention,
                                     on_step=progress, should_stop=reached))
    bar.empty()
    if presses.generate_ended(st.session_state):  # presses made during it: the page takes them next
        st.rerun()


def step_buttons(page: str, capture_attention: bool = False, with_generate: bool = True,
                 advance: Advance | None = None) -> int | None:
    """Next token · Generate N · Undo · Reset (· the page's advance) in one row, each with its key.

    ``page`` keeps widget ids unique. Returns N when Generate was pressed (the caller runs ``generate``
    where the progress bar belongs). The row wraps rather than cut a label short; in presenter mode its
    buttons are big (CSS on its key).
    """
    left, right = st.columns([3, 1], vertical_alignment="top")  # wide enough for the row on one line at 1280 px
    with right:
        predict.show_deferred()  # next to Next token, redrawn (and asked again) at each step
    row = left.container(key=f"teacher_row_{page}", horizontal=True, vertical_alignment="bottom",
                         gap="medium" if presenter.active() else "small")
    row.button("Next token", key=f"{page}_next", type="primary", on_click=next_token,
               kwargs={"capture_attention": capture_attention}, shortcut=NEXT_SHORTCUT,
               help="One decode step: pick a token, feed it in, the KV cache grows by one row.")
    pressed = None
    if with_generate:
        n = row.number_input("N", min_value=1, max_value=MAX_GENERATE, value=10, key=f"{page}_{keys.GENERATE_N}",
                             width=130, label_visibility="collapsed" if presenter.active() else "visible")
        if row.button(f"Generate {n}", key=f"{page}_generate", shortcut=GENERATE_SHORTCUT,
                      help="N decode steps in a row, with a progress bar."):
            pressed = int(n)
    row.button("Undo", key=f"{page}_undo", on_click=undo, shortcut=UNDO_SHORTCUT,
               help=f"Drop the last token: the cache is cropped by one row; past the last {FULL_LOGITS_KEPT} "
                    "steps one token is fed again to recompute the logits.")
    row.button("Reset", key=f"{page}_reset", on_click=reset, shortcut=RESET_SHORTCUT, help="Back to the prompt alone.")
    if advance:
        row.button(advance.label, key=f"{page}_advance", on_click=advance.on_click, args=advance.args,
                   shortcut=ADVANCE_SHORTCUT, help=advance.help)
    counter = f"{page}_presses"
    actions = {"next": lambda: next_token(capture_attention), "undo": undo}
    if pressed is None and with_generate:  # a counted Generate press, or the rest of one a press cut short
        def have() -> int:
            session = current_session()
            return len(session.records) if session is not None else 0
        pressed = presses.take_generate(st.session_state, counter, actions, int(n), have, current_session) or None
    button_keys = {"next": f"{page}_next", "undo": f"{page}_undo"}
    if with_generate:
        button_keys["generate"] = f"{page}_generate"
    with left:  # every quick press of the row (or N / G / U) counted in the browser, applied in order
        presses.press_counter(counter, button_keys, actions)
    return pressed


def open_section(sections: dict[str, Callable[..., None]], key: str, *args, guides: guide.Guides) -> None:
    """Tabs of which only the open one is drawn (``sections``: tab label → draw function, called with ``args``;
    ``guides``: the lesson's Notice / Try / Ask boxes, the open tab's shown above it).

    Every chart or table the browser redraws costs it tens of ms per click (``bench/click_cost.py``), so a
    page with many of them shows one section at a time and a click redraws the open one only.
    """
    links.apply_view(st.query_params, st.session_state, list(sections), key)  # ?view= opens a tab by name
    tabs = st.tabs(list(sections), key=key, on_change="rerun")
    for (label, draw), tab in zip(sections.items(), tabs):
        if tab.open:
            with tab:
                draw(*args)  # the picture first; its Notice / Try / Ask under it, so a click's result is in sight
                guide.show(guides, label, where=st.container())


def step_row(page: str, capture_attention: bool = False, advance: Advance | None = None) -> None:
    """The step buttons for a page that has no place of its own for generating: N steps run right here."""
    n = step_buttons(page, capture_attention=capture_attention, advance=advance)
    if n:
        generate(n, capture_attention=capture_attention)
