"""The serving lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui import predict
from autoreg_ui.lessons.serving import questions, text

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('batch', 'SERVING_BATCH', 'serving_batch'),
    ('memory', 'SERVING_MEMORY', 'serving_memory'),
    ('crossover', 'SERVING_CROSSOVER', 'serving_crossover'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [False, False, False])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_the_batch_answer_reads_the_engines_step_budget(live):
    from autoreg_core.experiments.roofline import step_budget

    one, eight = step_budget(live.bundle.spec, 1, 256), step_budget(live.bundle.spec, 8, 256)
    ratio = eight.bytes_read / one.bytes_read
    checked = questions.serving_batch(live)
    assert checked.answer.startswith(f"**{ratio:.2f}×**") and checked.right == predict.bucket(ratio, (2, 6))
