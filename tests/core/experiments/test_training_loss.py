"""The training loss on a learner's text: equal to transformers' own ``labels=`` loss, term by term the steps'
recorded log-probs, perplexity its exponential."""
from __future__ import annotations

import math

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments.teacher_forcing import MAX_TOKENS
from autoreg_core.experiments.training_loss import mean, recorded_gaps, text_loss


def _reference(bundle, ids: list[int]) -> float:
    with torch.inference_mode():
        t = torch.tensor([ids])
        return float(bundle.model(t, labels=t).loss)


def _session(bundle, n: int, temperature: float = 0.9) -> Session:
    s = Session(bundle, "The cat sat on the")
    s.generate(n, SamplingConfig(temperature=temperature, seed=3))
    return s


def test_the_loss_is_transformers_labels_loss_on_tiny(tiny):
    s = _session(tiny, 7)
    scored = text_loss(tiny, s.ids, s.prompt_len)
    assert len(scored.losses) == len(s.ids) - 1 == len(scored.top_ids)
    assert scored.loss == pytest.approx(_reference(tiny, s.ids), abs=1e-5)
    assert scored.perplexity == pytest.approx(math.exp(scored.loss))
    assert len(scored.prompt_losses) == s.prompt_len - 1 and len(scored.generated_losses) == 7
    assert scored.prompt_losses + scored.generated_losses == scored.losses


def test_each_generated_term_is_minus_the_recorded_logprob(tiny):
    s = _session(tiny, 6)
    scored = text_loss(tiny, s.ids, s.prompt_len)
    gaps = recorded_gaps(scored, s.records)
    assert len(gaps) == 6 and max(gaps) < 1e-4
    wrong = _session(tiny, 6, temperature=0.0)  # another text's records do not fit this one
    assert max(recorded_gaps(scored, wrong.records)) > 1e-3


def test_hits_count_where_the_top_guess_was_the_next_token(tiny):
    s = _session(tiny, 5, temperature=0.0)  # greedy: every generated token was the top guess
    scored = text_loss(tiny, s.ids, s.prompt_len)
    generated_hits = sum(int(t == y) for t, y in zip(scored.top_ids[s.prompt_len - 1:], s.ids[s.prompt_len:]))
    assert generated_hits == 5 and scored.hits >= 5


def test_a_text_too_short_and_a_cut_text():
    assert math.isnan(mean([])) and mean([1.0, 3.0]) == 2.0
    with pytest.raises(ValueError):
        text_loss(None, [5], 1)


def test_a_long_text_is_cut_to_what_one_pass_reads(tiny):
    ids = [int(i) % 300 + 3 for i in range(MAX_TOKENS + 7)][:tiny.spec.max_positions]
    scored = text_loss(tiny, ids, 3)
    assert len(scored.ids) == min(len(ids), MAX_TOKENS) and len(scored.losses) == len(scored.ids) - 1


@pytest.mark.integration
def test_the_loss_is_transformers_labels_loss_on_the_embedded_model(embedded):
    s = Session(embedded, "The capital of France is")
    s.generate(8, SamplingConfig(temperature=0.8, seed=1))
    scored = text_loss(embedded, s.ids, s.prompt_len)
    assert scored.loss == pytest.approx(_reference(embedded, s.ids), abs=1e-4)
    assert max(recorded_gaps(scored, s.records)) < 1e-3


def test_shared_pass_steps_counts_the_steps_whose_logits_a_shared_pass_made(tiny):
    """Step k chose from the logits of the pass that fed token k − 1: a shared pass that fed the last token made no
    compared step's logits, and step 1's came from the prefill."""
    from autoreg_core.engine.passes import PassResult, solo_step
    from autoreg_core.experiments.training_loss import shared_pass_steps

    solo, calls = solo_step(tiny), []

    def step_pass(cache, token, owner=None):
        calls.append(token)
        done = solo(cache, token, owner)
        return PassResult(done.logits, done.ms, 3 if len(calls) in (2, 4, 6) else 1)

    s = Session(tiny, "The cat sat on the", step_pass=step_pass)
    for _ in range(6):
        s.step(SamplingConfig(temperature=0.0))
    assert [r.pass_rows for r in s.records] == [1, 3, 1, 3, 1, 3]
    assert [shared_pass_steps(s.records[:n]) for n in range(7)] == [0, 0, 0, 1, 1, 2, 2]
