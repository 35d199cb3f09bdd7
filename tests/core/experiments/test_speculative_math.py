"""Speculation's arithmetic: the closed form against the sum it comes from and a simulation of rounds,
its boundaries, the best draft length, and the reading of a measured run."""
from __future__ import annotations

import random

import pytest

from autoreg_core.experiments import speculative_math as spec_math
from autoreg_core.experiments.speculative_decoding import Decoded, Round, Speculated


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.5, 0.8, 0.95, 0.999])
@pytest.mark.parametrize("k", [0, 1, 2, 4, 8])
def test_closed_form_is_the_sum_of_alpha_powers(alpha, k):
    assert spec_math.expected_tokens(alpha, k) == pytest.approx(sum(alpha ** i for i in range(k + 1)), rel=1e-12)


def _simulate(alpha: float, k: int, rounds: int, seed: int) -> float:
    """Rounds played out: keep guesses while a coin with P(keep) = α says so, then one token of the model's."""
    rng, total = random.Random(seed), 0
    for _ in range(rounds):
        kept = 0
        while kept < k and rng.random() < alpha:
            kept += 1
        total += kept + 1
    return total / rounds


@pytest.mark.parametrize("alpha,k", [(0.3, 3), (0.7, 4), (0.9, 8), (0.5, 1)])
def test_closed_form_matches_a_simulation(alpha, k):
    simulated = _simulate(alpha, k, 40_000, seed=k)
    assert simulated == pytest.approx(spec_math.expected_tokens(alpha, k), rel=0.02)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_boundaries_alpha_zero_gives_one_token_alpha_one_gives_k_plus_one(k):
    assert spec_math.expected_tokens(0.0, k) == 1.0
    assert spec_math.expected_tokens(1.0, k) == k + 1
    assert spec_math.expected_tokens(1.0 - 1e-9, k) == pytest.approx(k + 1, rel=1e-6)  # continuous at α = 1


def test_speedup_counts_the_drafts_cost():
    assert spec_math.speedup(0.8, 4, 0.0) == pytest.approx(spec_math.expected_tokens(0.8, 4))
    assert spec_math.speedup(0.8, 4, 0.25) == pytest.approx(spec_math.expected_tokens(0.8, 4) / 2.0)
    assert spec_math.speedup(0.8, 4, 0.25, verify=2.0) == pytest.approx(spec_math.expected_tokens(0.8, 4) / 3.0)
    for bad in [(-0.1, 2, 0.1), (1.1, 2, 0.1), (0.5, -1, 0.1), (0.5, 1.5, 0.1), (0.5, 2, -1.0)]:
        with pytest.raises(ValueError):
            spec_math.speedup(*bad)


def test_best_k_by_brute_force_and_where_drafting_stops_paying():
    for alpha, c in [(0.9, 0.05), (0.6, 0.1), (0.3, 0.3), (0.95, 0.0)]:
        best = spec_math.best_k(alpha, c)
        brute = max(range(1, spec_math.MAX_K + 1), key=lambda k: (spec_math.speedup(alpha, k, c), -k))
        assert best.k == brute and len(best.curve) == spec_math.MAX_K
        assert best.speedup == max(best.curve)
    assert spec_math.best_k(0.95, 0.0).k == spec_math.MAX_K  # a free draft: longer always pays
    assert spec_math.best_k(0.9, 0.05).pays
    low = spec_math.best_k(0.1, 0.5)  # poor guesses that cost half a step: plain decoding wins
    assert not low.pays and low.k == 1 and low.speedup < 1


def _round(drafted: int, accepted: int, draft_ms: float, verify_ms: float) -> Round:
    return Round(list(range(drafted)), accepted, 99, draft_ms, verify_ms)


def test_read_run_uses_full_rounds_and_per_token_times():
    plain = Decoded(tokens=list(range(10)), step_ms=[10.0] * 9)
    run = Speculated(draft="x", k=4, rounds=[_round(4, 4, 4.0, 20.0), _round(4, 0, 4.0, 20.0),
                                                _round(2, 1, 2.0, 20.0)])  # the short last round is left out
    read = spec_math.read_run(plain, run)
    assert (read.rounds, read.drafted, read.accepted) == (2, 8, 4)
    assert read.alpha == 0.5 and read.tokens_per_round == 3.0
    assert read.c == pytest.approx(0.1) and read.verify == pytest.approx(2.0)
    assert read.speedup == pytest.approx(10.0 / ((4 + 20 + 4 + 20 + 2 + 20) / (5 + 1 + 2)))
    assert read.predicted_tokens == pytest.approx(spec_math.expected_tokens(0.5, 4))
    with pytest.raises(ValueError):
        spec_math.read_run(Decoded(), run)
