"""Predict, then check: the machinery behind a few questions per page, each answered only after the learner has chosen.

Every answer is computed when asked, from the live session (the model's own distribution, a teacher-forced
pass, the logit lens, the tokenizer) or from the engine's arithmetic (``ModelSpec``), never typed in.
A question is three parts: ``fill`` fills the question from cheap live values, ``check`` runs the check and
returns which choice was right with the answer, and its words live with the lesson. Each lesson's questions
are in ``lessons/<lesson>/questions.py`` (its ``QUESTIONS``), their sentences in that lesson's ``text.py``;
only the box's own sentences are in ``predict_text``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.tokens import single_token_view
from autoreg_ui import keys, messages
from autoreg_ui import predict_text as text

DEFERRED = "predict_deferred"  # (page, questions): drawn next to the page's Next token (``show_deferred``)


@dataclass(frozen=True)
class Live:
    """What a check may read: the loaded model, this tab's session (None before a prompt) and its settings."""
    bundle: object
    session: object | None
    config: SamplingConfig


@dataclass(frozen=True)
class Checked:
    right: int  # index of the right choice
    answer: str  # Markdown, model text escaped


@dataclass(frozen=True)
class Question:
    key: str
    words: tuple[str, tuple[str, ...], str]  # (ask, choices, answer template) from the lesson's text
    check: Callable[[Live], Checked]
    fill: Callable[[Live], dict] = lambda live: {}  # cheap values the question itself shows
    needs_session: bool = True

    def ask(self, live: Live) -> tuple[str, tuple[str, ...]]:
        values = self.fill(live)
        ask, choices, _ = self.words
        return ask.format(**values), tuple(c.format(**values) for c in choices)


def bucket(value: float, edges: tuple[float, ...]) -> int:
    """Which of len(edges) + 1 ranges holds ``value`` (ranges are closed on the right: ≤ edge)."""
    return sum(value > edge for edge in edges)


def token_label(live: Live, token_id: int) -> str:
    """A token as the learner reads it in an answer: its piece, shown safely."""
    return messages.plain(single_token_view(live.bundle.tokenizer, int(token_id)).label)


def answer(words: tuple[str, tuple[str, ...], str], **values) -> str:
    """A question's answer template filled with the values its check computed."""
    return words[2].format(**values)


def verdict(question: Question, live: Live, choice: int) -> str:
    """The Markdown shown once a choice is made: right or not, and the computed answer."""
    if question.needs_session and live.session is None:
        return text.NO_SESSION
    try:
        checked = question.check(live)
    except ValueError as error:
        return text.FAILED.format(error=messages.plain(str(error)))
    return f"**{text.CORRECT if choice == checked.right else text.NOT_QUITE}** {checked.answer}"


def radio_key(page: str, question: Question, step: int) -> str:
    """A question's widget key: a new one at each step, so the question is asked afresh with that step's numbers."""
    return f"predict_{page}_{question.key}" + (f"_at{step}" if step else "")


def defer(page: str, questions: tuple[Question, ...]) -> None:
    """This page draws its box next to its Next token (``controls.step_buttons``), redrawn at each step."""
    st.session_state[DEFERRED] = (page, questions)


def show_deferred() -> None:
    """The box a page deferred (``defer``), if any; drawn where the step buttons are."""
    deferred = st.session_state.get(DEFERRED)
    if deferred is not None:
        show(*deferred)


def show(page: str, questions: tuple[Question, ...], live: Live | None = None) -> None:
    """The page's folded ``questions`` (its lesson's ``QUESTIONS``); a check runs only after its answer is picked.

    ``page``: the page's name, which keys its widgets (``predict_<page>_<question>``); ``live``: this tab's by default.
    """
    # keyed: it stays open once opened, a verdict included, until the learner closes it. Its questions are drawn
    # only while it is open: a closed box costs each Next token click one element, not a caption and three radios,
    # and nothing is read for it (the model, the session, the settings) until it is open.
    box = st.expander(text.TITLE, icon=":material/quiz:", key=f"{keys.PREDICT_BOX}{page}", on_change="rerun")
    if not box.open:
        return
    if live is None:
        from autoreg_ui.state import current_bundle, current_config, current_session

        bundle = current_bundle()
        if bundle is None:
            return
        live = Live(bundle, current_session(), current_config())
    step = len(live.session.records) if live.session is not None else 0
    with box:
        st.caption(text.INTRO)
        if step and any(q.needs_session for q in questions):
            st.caption(text.ASKED_AT.format(step=step))
        for question in questions:
            ask, choices = question.ask(live)
            picked = st.radio(ask, range(len(choices)), format_func=lambda i, c=choices: c[i], index=None,
                              key=radio_key(page, question, step))
            if picked is not None:
                st.markdown(verdict(question, live, picked))
