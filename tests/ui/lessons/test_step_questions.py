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


@pytest.mark.parametrize("top, runner_up, said_top, said_second", [
    (0.415, 0.2, "p = 41.5%", "20.0%"),
    (0.9994, 0.0004, "p = 99.9%", "0.04%"),
    (0.9996, 0.000004, "p > 99.9%", "< 0.001%"),
    (0.50004, 0.2, "p = 50.004%", "20.0%"),  # over the question's line, and said so
    (0.5, 0.2, "p = 50.0%", "20.0%"),
    (0.49996, 0.2, "p = 49.996%", "20.0%"),
    (0.3004, 0.2996, "p = 30.0%", "30.0% too (equal to the digits shown)"),
    (0.3006, 0.2994, "p = 30.1%", "29.9%"),
])
def test_the_top_answer_writes_its_probabilities_as_the_page_does(live, monkeypatch, top, runner_up, said_top,
                                                                   said_second):
    """Never 'p = 100.0%' for a top token the model leaves a little doubt, never '0.0%' for its runner-up."""
    import torch

    probs = torch.zeros(len(live.bundle.tokenizer))
    probs[1], probs[2] = top, runner_up

    class Pipe:
        raw_probs = probs
    monkeypatch.setattr(live.session, "next_pipeline", lambda config: Pipe())
    answer = questions.step_top(live).answer
    assert f"with **{said_top}** in its own softmax; the runner-up has {said_second}." in answer
