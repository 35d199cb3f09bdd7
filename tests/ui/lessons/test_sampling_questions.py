"""The sampling lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui import predict, predict_text
from autoreg_ui.lessons.sampling import questions, text

EXPECTED = (  # (key, its words in text, its check)
    ('temperature', 'SAMPLING_TEMPERATURE', 'sampling_temperature'),
    ('top_p', 'SAMPLING_TOP_P', 'sampling_top_p'),
    ('top_k', 'SAMPLING_TOP_K', 'sampling_top_k'),
)


def test_the_questions_keep_their_keys_and_their_words():
    assert [q.key for q in questions.QUESTIONS] == [k for k, _, _ in EXPECTED]  # widget keys predict_sampling_<key>
    assert [q.words for q in questions.QUESTIONS] == [getattr(text, w) for _, w, _ in EXPECTED]
    assert [q.check for q in questions.QUESTIONS] == [getattr(questions, f) for _, _, f in EXPECTED]
    assert [q.needs_session for q in questions.QUESTIONS] == [True, True, True]


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    question = questions.QUESTIONS[index]
    ask, choices = question.ask(live)
    checked = question.check(live)
    assert 0 <= checked.right < len(choices) and len(choices) == len(question.words[1])
    assert "{" not in ask + checked.answer and all("{" not in c for c in choices)
    assert predict.verdict(question, live, checked.right).startswith(f"**{predict_text.CORRECT}**")
    wrong = (checked.right + 1) % len(choices)
    assert predict.verdict(question, live, wrong).startswith(f"**{predict_text.NOT_QUITE}**")


def test_the_top_p_question_names_this_models_vocabulary(live):
    ask, _ = questions.QUESTIONS[1].ask(live)
    assert f"{live.bundle.spec.vocab:,} tokens" in ask
