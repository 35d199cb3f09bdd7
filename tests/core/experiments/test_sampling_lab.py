"""The sampling lab's arithmetic: the textbook draw, many draws, the temperature sweep, strategies."""
import pytest
import torch

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode
from autoreg_core.experiments import sampling_lab as lab

VOCAB = 500


def _logits(seed=0, vocab=VOCAB, scale=3.0):
    return torch.randn(vocab, generator=torch.Generator().manual_seed(seed)) * scale


def test_inverse_cdf_draw_shows_where_u_fell():
    pipe = decode.process(_logits(6), None, SamplingConfig(temperature=1.2, top_k=30, top_p=0.8))
    kept, seen = set(pipe.kept_ids.tolist()), set()
    for seed in range(200):
        d = lab.inverse_cdf_draw(pipe.probs, seed)
        assert d.token_id in kept and int(d.order[d.position]) == d.token_id
        low, high = d.interval
        assert low <= d.u < high and high - low == pytest.approx(float(pipe.probs[d.token_id]), abs=1e-6)
        seen.add(d.token_id)
    assert len(seen) > 3
    assert lab.inverse_cdf_draw(pipe.probs, 7).token_id == lab.inverse_cdf_draw(pipe.probs, 7).token_id
    # the same u as decode.draw on a generator seeded alike: one draw function, not two
    same = decode.draw(pipe.probs, torch.Generator().manual_seed(7), decode.INVERSE_CDF)
    ours = lab.inverse_cdf_draw(pipe.probs, 7)
    assert (same.token_id, same.u) == (ours.token_id, ours.u)


def test_ten_thousand_draws_match_the_probabilities():
    """Tolerance: every token's frequency within 5 standard errors (+1e-3) of its probability."""
    probs = decode.process(_logits(7, scale=1.5), None, SamplingConfig(top_k=20)).probs
    many = lab.draw_many(probs, 10_000, seed=123)
    assert many.n == 10_000 and int(many.counts.sum()) == 10_000 and not many.capped
    p = probs.double()
    se = torch.sqrt(p * (1 - p) / many.n)
    assert bool(((many.freqs - p).abs() <= 5 * se + 1e-3).all())
    assert many.largest_gap(probs) == pytest.approx(float((many.freqs - p).abs().max()))
    assert int(many.counts[probs == 0].sum()) == 0  # filtered tokens are never drawn
    wrong = torch.roll(p, 1)  # a wrong distribution is caught by the same tolerance
    assert not bool(((many.freqs - wrong).abs() <= 5 * se + 1e-3).all())


def test_draw_many_caps_n_and_refuses_an_empty_distribution():
    probs = torch.softmax(_logits(8), dim=-1)
    many = lab.draw_many(probs, 10**9, seed=0)
    assert many.capped and many.n == lab.MAX_DRAWS
    assert lab.draw_many(probs, 0, seed=0).n == 1
    with pytest.raises(ValueError):
        lab.draw_many(torch.zeros(VOCAB), 10, seed=0)


def test_temperature_sweep_is_monotone_and_agrees_with_decode():
    logits = _logits(9)
    sweep = lab.temperature_sweep(logits)
    assert sweep.temperatures[0] == 0.05 and sweep.temperatures[-1] == 3.0 and len(sweep.temperatures) == 60
    assert len(sweep.entropy_bits) == len(sweep.top_prob) == len(sweep.cover) == 60
    assert all(b >= a - 1e-9 for a, b in zip(sweep.entropy_bits, sweep.entropy_bits[1:]))
    assert all(b <= a + 1e-9 for a, b in zip(sweep.top_prob, sweep.top_prob[1:]))
    assert all(b >= a for a, b in zip(sweep.cover, sweep.cover[1:]))
    i = sweep.at(1.0)
    assert sweep.temperatures[i] == 1.0
    probs = torch.softmax(logits, dim=-1)
    assert sweep.entropy_bits[i] == pytest.approx(decode.entropy_bits(probs), rel=1e-5)
    assert sweep.cover[i] == decode.tokens_to_cover(probs, 0.9)
    assert sweep.top_prob[i] == pytest.approx(float(probs.max()), rel=1e-5)


def test_strategies_side_by_side():
    rows = lab.compare_strategies(_logits(10), lab.default_strategies(min_p=0.05))
    assert [r.name for r in rows] == ["greedy", "temperature 0.7", "temperature 1.0", "temperature 1.5",
                                      "top-k 40", "top-p 0.9", "min-p 0.05"]
    by = {r.name: r for r in rows}
    assert by["greedy"].kept == 1 and by["greedy"].entropy_bits == 0.0 and by["greedy"].top_prob == 1.0
    assert by["top-k 40"].kept == 40
    assert by["temperature 0.7"].entropy_bits < by["temperature 1.0"].entropy_bits < by["temperature 1.5"].entropy_bits
    assert by["top-p 0.9"].kept < VOCAB and by["min-p 0.05"].kept < VOCAB
    assert by["temperature 1.0"].kept == VOCAB


def test_shown_ids_follow_the_penalised_order_and_add_the_drawn_token():
    logits = _logits(11)
    order = torch.argsort(logits, descending=True).tolist()
    plain = decode.process(logits, None, SamplingConfig())
    assert lab.shown_ids(plain, 5) == order[:5]
    assert lab.shown_ids(plain, 5, also=order[100]) == order[:5] + [order[100]]
    assert lab.shown_ids(plain, 5, also=order[2]) == order[:5]
    penalised = decode.process(logits, [order[0]], SamplingConfig(repetition_penalty=100.0))
    assert order[0] not in lab.shown_ids(penalised, 5) and len(lab.shown_ids(penalised, 5)) == 5
    assert lab.top_token_ids(torch.tensor([0.1, float("nan"), 3.0]), 10) == [2, 0, 1]
