"""The Start page's quiz numbers come from the engine, each right choice agrees with them, and every question is
on a topic the 45-minute path teaches."""
import math

import pytest

from autoreg_ui.lessons.start import numbers as start
from autoreg_ui.lessons.start import text


@pytest.fixture(scope="module")
def numbers():
    return start.quiz_numbers()


def test_the_seeds_worked_examples(numbers):
    assert (numbers["naive_50_100"], numbers["cached_50_100"]) == (9950, 149)
    assert (numbers["naive_1000"], numbers["cached_1000"]) == (500_500, 1000)
    assert numbers["chain_logp"] == pytest.approx(math.log(0.5) + math.log(0.4) + math.log(0.5))
    assert numbers["chain_p"] == pytest.approx(0.1) and numbers["chain_product"] == "0.5 × 0.4 × 0.5"
    assert (numbers["top_p_kept"], numbers["top_p_mass"], numbers["top_p_probs"]) == (2, 0.7, "0.571 and 0.429")


def test_the_top_p_answer_is_the_pipelines_own_on_both_sides_of_the_threshold():
    import torch

    from autoreg_core import SamplingConfig
    from autoreg_core.engine.decode import process

    logits = torch.tensor(start.TOP_P_PROBS).log()
    assert process(logits, [], SamplingConfig(top_p=0.4)).kept == 1  # 0.4 alone reaches 0.4
    assert process(logits, [], SamplingConfig(top_p=0.41)).kept == 2
    assert process(logits, [], SamplingConfig(top_p=0.71)).kept == 3


def test_each_right_choice_matches_the_computed_answer(numbers):
    naive, chain, top_p = text.QUIZ
    assert abs(numbers["naive_50_100"] - 10_000) / 10_000 < 0.02 and "10,000" in naive.choices[naive.right]
    assert float(chain.choices[chain.right]) == pytest.approx(numbers["chain_p"])
    assert int(top_p.choices[top_p.right]) == numbers["top_p_kept"]
    listed = lambda ps: ", ".join(f"{p:g}" for p in ps[:-1]) + f" and {ps[-1]:g}"  # noqa: E731 - the question's list
    assert listed(start.CHAIN) in chain.ask and listed(start.TOP_P_PROBS) in top_p.ask
    assert f"Top-p = {start.TOP_P:g}" in top_p.ask
    assert all(q.choices[q.right] == "false" for q in text.MYTHS)


def test_every_answer_fills_in_without_a_missing_number(numbers):
    for q in text.QUIZ + text.MYTHS:
        answer = text.answer_text(q, numbers)
        assert "{" not in answer and "}" not in answer
    assert "0.5 × 0.4 × 0.5 = **0.1**" in text.answer_text(text.QUIZ[1], numbers)
    assert "keeps **2** tokens" in text.answer_text(text.QUIZ[2], numbers)


def test_every_question_is_on_a_page_the_45_minute_path_stops_at():
    stops = {stop.page for stop in text.SHORT}
    assert {"step", "tokens", "sampling", "attention", "cost"} <= stops
    assert [(q.key, q.topic) for q in text.QUIZ] == [("naive", "cost"), ("chain", "step"), ("top_p", "sampling")]
    for q in text.QUIZ + text.MYTHS:
        assert q.topic in stops and q.topic != "start", (q.key, q.topic)
    assert len({q.topic for q in text.QUIZ}) == len(text.QUIZ)  # three questions, three stops


def test_the_wrap_up_still_names_the_first_question():
    wrap_up = text.SHORT[-1]
    assert "first question below (the tokens pushed through the model without a cache)" in wrap_up.do
    assert text.QUIZ[0].key == "naive" and "Without a KV cache" in text.QUIZ[0].ask
