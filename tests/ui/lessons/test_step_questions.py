"""The step lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui import predict, predict_text
from autoreg_ui.lessons.step import questions, text
from autoreg_ui.predict import Live

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('top', 'STEP_TOP', 'step_top'),
    ('logprob', 'STEP_LOGPROB', 'step_logprob'),
    ('entropy', 'STEP_ENTROPY', 'step_entropy'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [True, True, True])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_a_step_question_without_a_session_asks_for_one(tiny):
    from autoreg_core import SamplingConfig

    assert predict.verdict(questions.QUESTIONS[0], Live(tiny, None, SamplingConfig()), 0) == predict_text.NO_SESSION
