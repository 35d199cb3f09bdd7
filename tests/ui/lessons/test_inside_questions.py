"""The inside lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui.lessons.inside import questions, text

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('passes', 'INSIDE_PASSES', 'inside_passes'),
    ('lens', 'INSIDE_LENS', 'inside_lens'),
    ('phases', 'INSIDE_PHASES', 'inside_phases'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [True, True, True])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_the_inside_questions_count_this_sessions_tokens(live):
    ask, choices = questions.QUESTIONS[0].ask(live)
    n = len(live.session.records)
    assert f"{n:,} generated tokens" in ask and choices == ("1", f"{n:,}", f"{n + 1:,}")
    ask, _ = questions.QUESTIONS[2].ask(live)
    assert f"the {live.session.prompt_len:,}-token prompt" in ask
