"""The cost lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui.lessons.cost import questions, text

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('flops', 'COST_FLOPS', 'cost_flops'),
    ('growth', 'COST_GROWTH', 'cost_growth'),
    ('share', 'COST_SHARE', 'cost_share'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [False, False, False])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_the_cost_questions_ask_at_the_lengths_their_checks_use(live):
    assert f"L = {questions.COST_LENGTH:,}" in questions.QUESTIONS[0].ask(live)[0]
    assert f"L = {questions.SHARE_LENGTH:,}" in questions.QUESTIONS[2].ask(live)[0]
