"""The tokens lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui.lessons.tokens import questions, text

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('script', 'TOKENS_SCRIPT', 'tokens_script'),
    ('space', 'TOKENS_SPACE', 'tokens_space'),
    ('emoji', 'TOKENS_EMOJI', 'tokens_emoji'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [False, False, False])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_the_script_question_counts_the_lessons_own_samples(live):
    from autoreg_core.engine.tokens import script_count

    en = script_count(live.bundle.tokenizer, "English", text.SAMPLES["English"])
    assert f"English **{en.tokens}** tokens for {en.characters} characters" in questions.tokens_script(live).answer
    space = questions.tokens_space(live)
    assert space.answer.startswith(text.SPACE_SAME if space.right == 0 else text.SPACE_APART)
