"""The toy loop: the engine's own sampling code on a four-token bigram table."""
import pytest
import torch

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.experiments import toy_model as toy


def test_greedy_follows_the_highest_score_of_each_row_until_eos():
    steps = toy.toy_trace("the")
    words = [toy.VOCAB[s.pick] for s in steps]
    assert words == ["cat", "sat", "<eos>"]  # and the loop stops there
    assert len(steps) == 3
    for s in steps:
        assert s.pick == max(range(4), key=lambda i: s.logits[i]) and s.probs[s.pick] == 1.0
        assert list(s.logits) == toy.SCORES[s.context[-1]].tolist()
    assert [len(s.context) for s in steps] == [1, 2, 3]
    assert len(toy.toy_trace("the", max_steps=2)) == 2  # the cap, before <eos>


def test_sampling_draws_from_the_softmax_and_stops_at_eos():
    config = SamplingConfig(temperature=1.0, seed=3)
    steps = toy.toy_trace("cat", config, max_steps=50)
    assert steps == toy.toy_trace("cat", config, max_steps=50)  # the seed fixes the trace
    first = steps[0]
    assert first.probs == pytest.approx(torch.softmax(toy.SCORES[1], 0).tolist(), abs=1e-6)
    ended = [toy.toy_trace("the", SamplingConfig(temperature=1.0, seed=s), 50)[-1].pick for s in range(20)]
    assert toy.EOS in ended  # some seeds reach <eos> before 50 steps


def test_temperature_sharpens_the_toy_distribution_and_bad_starts_are_refused():
    cold = toy.toy_trace("the", SamplingConfig(temperature=0.5, seed=0), 1)[0].probs
    warm = toy.toy_trace("the", SamplingConfig(temperature=2.0, seed=0), 1)[0].probs
    assert max(cold) > max(warm)
    with pytest.raises(ValueError):
        toy.toy_trace("<eos>")
    with pytest.raises(ValueError):
        toy.toy_trace("dog")
