"""What every lesson's questions must do, written once: keep their widget keys and their words, and grade a
choice with an answer filled from the live model. Each lesson's test file passes its own module and table."""
from __future__ import annotations

from autoreg_ui import predict, predict_text


def assert_keys_and_words(questions, text, expected, needs_session) -> None:
    """``expected``: (key, the name of its words in ``text``, the name of its check in ``questions``)."""
    assert [q.key for q in questions.QUESTIONS] == [k for k, _, _ in expected]  # widget keys predict_<page>_<key>
    assert [q.words for q in questions.QUESTIONS] == [getattr(text, w) for _, w, _ in expected]
    assert [q.check for q in questions.QUESTIONS] == [getattr(questions, f) for _, _, f in expected]
    assert [q.needs_session for q in questions.QUESTIONS] == list(needs_session)


def assert_grades(question, live) -> None:
    """The question asks and answers with every blank filled, and its verdict says right or wrong as it is."""
    ask, choices = question.ask(live)
    checked = question.check(live)
    assert 0 <= checked.right < len(choices) and len(choices) == len(question.words[1])
    assert "{" not in ask + checked.answer and all("{" not in c for c in choices)
    assert predict.verdict(question, live, checked.right).startswith(f"**{predict_text.CORRECT}**")
    wrong = (checked.right + 1) % len(choices)
    assert predict.verdict(question, live, wrong).startswith(f"**{predict_text.NOT_QUITE}**")
