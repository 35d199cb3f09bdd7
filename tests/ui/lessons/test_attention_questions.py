"""The attention lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui.lessons.attention import questions, text

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('keys', 'ATTENTION_KEYS', 'attention_keys'),
    ('growth', 'ATTENTION_GROWTH', 'attention_growth'),
    ('focus', 'ATTENTION_FOCUS', 'attention_focus'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [True, False, True])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_an_uncaptured_row_is_said_in_the_lessons_own_words(live, monkeypatch):
    monkeypatch.setattr(live.session.records[-1], "attention", None)
    with pytest.raises(ValueError, match="was not captured"):
        questions.attention_keys(live)
    assert text.CHECK_NOT_CAPTURED != text.NOT_CAPTURED  # the page's own note about a row is another sentence
