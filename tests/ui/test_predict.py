"""Predict, then check: every answer is computed from the live session or the model's shape, and graded."""
import re

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_ui import predict
from autoreg_ui import predict_text as text
from autoreg_ui.predict import Live


@pytest.fixture
def live(tiny):
    s = Session(tiny, "The cat sat")
    for _ in range(4):
        s.step(SamplingConfig(temperature=0))
    return Live(tiny, s, SamplingConfig())


def test_every_question_fills_its_words_and_grades_an_answer(live):
    for page, questions in predict.QUESTIONS.items():
        assert 2 <= len(questions), page
        for q in questions:
            ask, choices = q.ask(live)
            checked = q.check(live)
            assert 0 <= checked.right < len(choices), (page, q.key)
            assert "{" not in ask + checked.answer and all("{" not in c for c in choices), (page, q.key)
            assert predict.verdict(q, live, checked.right).startswith(f"**{text.CORRECT}**")
            wrong = (checked.right + 1) % len(choices)
            assert predict.verdict(q, live, wrong).startswith(f"**{text.NOT_QUITE}**")


def test_step_top_reads_the_models_own_next_distribution(live):
    probs = live.session.next_pipeline(live.config).raw_probs
    p = float(probs.max())
    checked = predict.step_top(live)
    assert checked.right == (0 if p > 0.5 else 1)
    assert f"p = **{p:.1%}**" in checked.answer


def test_top_p_counts_the_smallest_nucleus(live):
    probs = live.session.next_pipeline(SamplingConfig()).raw_probs
    sorted_probs = torch.sort(probs, descending=True).values
    nucleus = int((torch.cumsum(sorted_probs, 0) < 0.9).sum()) + 1  # the smallest set reaching 0.9
    checked = predict.sampling_top_p(live)
    assert f"**{nucleus:,}** tokens" in checked.answer
    assert checked.right == predict.bucket(nucleus, (1, 10, 100))


def test_the_next_query_sees_the_cache_plus_its_own_key(live):
    checked = predict.attention_keys(live)
    assert checked.right == 1 and f"**{live.session.cache_len + 1:,}**" in checked.answer
    ask, choices = predict.QUESTIONS["attention"][0].ask(live)
    assert choices == (f"{live.session.cache_len:,}", f"{live.session.cache_len + 1:,}", "just 1")


def test_cost_answers_are_this_models_formulas(live):
    spec = live.bundle.spec
    ratio = spec.flops_step(1024, cached=False) / spec.flops_step(1024, cached=True)
    assert f"**{ratio:,.0f}×**" in predict.cost_flops(live).answer
    growth = spec.flops_step(2048, cached=True) / spec.flops_step(128, cached=True) - 1
    assert f"**{growth:.0%}**" in predict.cost_growth(live).answer


def test_teacher_forcing_check_runs_one_pass_and_matches_the_steps(live):
    checked = predict.inside_passes(live)
    gap = float(re.search(r"to \*\*([0-9.e+-]+)\*\* nats", checked.answer).group(1))
    assert checked.right == 0 and gap < 1e-3


def test_buckets_are_closed_on_the_right():
    assert [predict.bucket(v, (1, 10, 100)) for v in (1, 2, 10, 11, 100, 101)] == [0, 1, 1, 2, 2, 3]


def test_a_check_that_needs_a_session_says_so_and_a_failed_check_says_why(tiny):
    q = predict.QUESTIONS["step"][0]
    assert predict.verdict(q, Live(tiny, None, SamplingConfig()), 0) == text.NO_SESSION
    fresh = Live(tiny, Session(tiny, "The cat"), SamplingConfig())
    assert predict.verdict(predict.QUESTIONS["inside"][0], fresh, 0).startswith("This check could not run")
