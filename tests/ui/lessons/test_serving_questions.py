"""The serving lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_ui import predict, predict_text
from autoreg_ui.lessons.serving import questions, text

EXPECTED = (  # (key, its words in text, its check)
    ('batch', 'SERVING_BATCH', 'serving_batch'),
    ('memory', 'SERVING_MEMORY', 'serving_memory'),
    ('crossover', 'SERVING_CROSSOVER', 'serving_crossover'),
)


def test_the_questions_keep_their_keys_and_their_words():
    assert [q.key for q in questions.QUESTIONS] == [k for k, _, _ in EXPECTED]  # widget keys predict_serving_<key>
    assert [q.words for q in questions.QUESTIONS] == [getattr(text, w) for _, w, _ in EXPECTED]
    assert [q.check for q in questions.QUESTIONS] == [getattr(questions, f) for _, _, f in EXPECTED]
    assert [q.needs_session for q in questions.QUESTIONS] == [False, False, False]


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


def test_the_batch_answer_reads_the_engines_step_budget(live):
    from autoreg_core.batching import step_budget

    one, eight = step_budget(live.bundle.spec, 1, 256), step_budget(live.bundle.spec, 8, 256)
    ratio = eight.bytes_read / one.bytes_read
    checked = questions.serving_batch(live)
    assert checked.answer.startswith(f"**{ratio:.2f}×**") and checked.right == predict.bucket(ratio, (2, 6))
