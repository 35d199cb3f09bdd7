"""The sampling lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui.lessons.sampling import questions, text

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('temperature', 'SAMPLING_TEMPERATURE', 'sampling_temperature'),
    ('top_p', 'SAMPLING_TOP_P', 'sampling_top_p'),
    ('top_k', 'SAMPLING_TOP_K', 'sampling_top_k'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [True, True, True])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_the_top_p_question_names_this_models_vocabulary(live):
    ask, _ = questions.QUESTIONS[1].ask(live)
    assert f"{live.bundle.spec.vocab:,} tokens" in ask
