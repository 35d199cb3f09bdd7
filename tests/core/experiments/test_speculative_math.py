"""Speculation's arithmetic: the closed form against the sum it comes from and a simulation of rounds,
its boundaries, the best draft length, and the reading of a measured run."""
from __future__ import annotations

import math
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


GRID_ALPHA = [i / 20 for i in range(21)]
GRID_C = [0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0]


@pytest.mark.parametrize("verify", [1.0, 1.7])
def test_the_next_guess_rule_finds_the_exhaustive_maximum_over_a_grid(verify):
    """Lengthening the draft while α^(k+1)/c exceeds the speed-up reached stops at the k an exhaustive search over
    1 … MAX_K finds (the smallest on a tie), and the rule agrees with the curve at every single step."""
    for alpha in GRID_ALPHA:
        for c in GRID_C:
            best = spec_math.best_k(alpha, c, verify)
            curve = [spec_math.speedup(alpha, k, c, verify) for k in range(1, spec_math.MAX_K + 1)]
            exhaustive = max(range(1, spec_math.MAX_K + 1), key=lambda k: (curve[k - 1], -k))
            assert best.speedup == curve[exhaustive - 1], (alpha, c, verify)
            # the same k, except where a free draft's guesses (c = 0) still add α^(k+1) > 0 tokens, too few for a
            # float to show: the curve is flat to the last bit there, and the rule keeps lengthening, rightly
            assert best.k == exhaustive or (c == 0 and alpha > 0 and best.k == spec_math.MAX_K), (alpha, c, verify)
            for k in range(1, spec_math.MAX_K):
                rises = curve[k] > curve[k - 1] * (1 + 1e-12)
                flat = abs(curve[k] - curve[k - 1]) <= 1e-12 * curve[k - 1]
                assert flat or spec_math.next_guess_pays(alpha, k, c, verify) == rises, (alpha, c, k)


def test_the_rule_on_the_pages_question_where_the_old_rule_was_wrong():
    """α = 0.7, c = 0.2: the 4th guess adds 0.7⁴ = 0.24 tokens for 0.2 steps (more than it costs), yet the
    speed-up falls from 1.583× to 1.541×, because 0.24 / 0.2 = 1.20 is below the 1.583 already reached."""
    best = spec_math.best_k(0.7, 0.2)
    assert best.k == 3 and best.speedup == pytest.approx(1.5831, abs=1e-4)
    assert best.curve[3] == pytest.approx(1.5406, abs=1e-4)
    assert best.next_adds == pytest.approx(0.7 ** 4) and best.next_adds > 0.2
    assert best.next_adds / 0.2 < best.speedup and not spec_math.next_guess_pays(0.7, 3, 0.2)
    assert spec_math.next_guess_pays(0.7, 2, 0.2)


def test_a_larger_draft_cost_never_lengthens_the_best_draft():
    """The what-if Try: raise c and the best k moves left (never right), and by c = 1 no draft beats 1×."""
    for alpha in GRID_ALPHA:
        ks = [spec_math.best_k(alpha, c).k for c in [j / 100 for j in range(101)]]
        assert all(a >= b for a, b in zip(ks, ks[1:])), alpha
        assert spec_math.best_k(alpha, 1.0).speedup <= 1.0 + 1e-12


# ---------------------------------------------------------------- estimating α from rounds
def _independent(alpha: float, k: int, rounds: int, seed: int, lengths=None) -> list[Round]:
    """Rounds of ``k`` guesses (or ``lengths``), each tested guess kept with probability α independently, testing
    stopped at the first rejection."""
    rng, out = random.Random(seed), []
    for i in range(rounds):
        drafted = k if lengths is None else lengths[i % len(lengths)]
        kept = 0
        while kept < drafted and rng.random() < alpha:
            kept += 1
        out.append(_round(drafted, kept, 1.0, 10.0))
    return out


def _bursty(k: int, rounds: int, seed: int, easy: float = 0.95, hard: float = 0.2) -> list[Round]:
    """Correlated acceptance: half the rounds are easy (every guess kept with ``easy``), half hard: a kept guess
    makes it likelier the round is easy, so the next guess is likelier kept."""
    rng, out = random.Random(seed), []
    for _ in range(rounds):
        alpha = easy if rng.random() < 0.5 else hard
        kept = 0
        while kept < k and rng.random() < alpha:
            kept += 1
        out.append(_round(k, kept, 1.0, 10.0))
    return out


def _read(rounds: list[Round], k: int):
    plain = Decoded(tokens=list(range(10)), token_ms=[10.0] * 9)
    return spec_math.read_run(plain, Speculated(draft="x", k=k, rounds=rounds))


@pytest.mark.parametrize("alpha", [0.3, 0.6, 0.8, 0.95])
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_alpha_estimate_recovers_a_known_alpha_from_independent_acceptance(alpha, k):
    read = _read(_independent(alpha, k, 3000, seed=int(alpha * 100) + k), k)
    error = math.sqrt(alpha * (1 - alpha) / read.tested)
    assert abs(read.alpha - alpha) < 4 * error, (read.alpha, alpha, error)
    if k >= 2:  # kept ÷ drafted estimates (α + … + α^k) / k instead, which is not α
        assert abs(read.draft_acceptance_rate - alpha) > 3 * error
        assert read.draft_acceptance_rate == pytest.approx(sum(alpha ** i for i in range(1, k + 1)) / k, abs=0.015)
    else:  # one guess a round: every drafted guess is tested, and the two agree
        assert read.draft_acceptance_rate == read.alpha
    # with the right α the formula predicts the measured tokens per round (within sampling error)
    assert read.predicted_tokens == pytest.approx(read.tokens_per_round, rel=0.03)


def test_the_issues_numbers_alpha_0_8_k_4():
    """kept ÷ drafted would read 0.59 and predict 2.27 tokens, 2.10×, best k 5; α per tested guess gives 3.36,
    3.11× and best k 11 (c = 0.02)."""
    assert sum(0.8 ** i for i in range(1, 5)) / 4 == pytest.approx(0.5904)
    assert spec_math.expected_tokens(0.5904, 4) == pytest.approx(2.27, abs=0.005)
    assert spec_math.speedup(0.5904, 4, 0.02) == pytest.approx(2.10, abs=0.005)
    assert spec_math.best_k(0.5904, 0.02).k == 5
    assert spec_math.expected_tokens(0.8, 4) == pytest.approx(3.36, abs=0.005)
    assert spec_math.speedup(0.8, 4, 0.02) == pytest.approx(3.11, abs=0.005)
    assert spec_math.best_k(0.8, 0.02).k == 11


def test_alpha_estimate_with_rounds_of_different_lengths():
    """Prompt lookup drafts fewer than k guesses where its match is short or missing: every tested guess still
    counts once, and the prediction uses each round's own length."""
    rounds = _independent(0.7, 4, 4000, seed=3, lengths=[4, 4, 2, 0, 1])
    read = _read(rounds, 4)
    assert read.rounds == 4000 and read.full_rounds == 1600 and read.drafted == 800 * 11
    assert abs(read.alpha - 0.7) < 4 * math.sqrt(0.21 / read.tested)
    assert read.predicted_tokens == pytest.approx(read.tokens_per_round, rel=0.03)
    per_round = [spec_math.expected_tokens(read.alpha, d) for d in (4, 4, 2, 0, 1)]
    assert read.predicted_tokens == pytest.approx(sum(per_round) / 5)
    assert spec_math.alpha_estimate(0, 0) != spec_math.alpha_estimate(0, 0)  # NaN: nothing tested


@pytest.mark.parametrize("alpha,k,seed", [(0.3, 4, 1), (0.6, 4, 2), (0.8, 4, 3), (0.9, 8, 4), (0.5, 2, 5),
                                          (0.95, 6, 6)])
def test_independent_acceptance_shows_no_runs(alpha, k, seed):
    runs = _read(_independent(alpha, k, 3000, seed), k).runs
    assert runs.reading == "chance", (runs, runs.z)
    assert abs(runs.first_rate - runs.later_rate) < 0.05


@pytest.mark.parametrize("k,seed", [(2, 1), (4, 2), (8, 3)])
def test_bursty_acceptance_shows_runs(k, seed):
    runs = _read(_bursty(k, 3000, seed), k).runs
    assert runs.reading == "runs" and runs.z > spec_math.RUNS_Z and runs.later_rate > runs.first_rate + 0.2


def test_runs_counts_by_hand_and_the_cases_without_an_answer():
    rounds = [_round(4, 4, 1, 1), _round(4, 0, 1, 1), _round(4, 2, 1, 1), _round(2, 2, 1, 1), _round(0, 0, 1, 1)]
    runs = spec_math.runs_of(rounds)
    # first guesses: 4 tested (the empty round has none), 3 kept; later: 3 + 0 + 2 + 1 tested, 3 + 0 + 1 + 1 kept
    assert (runs.first_kept, runs.first_tested, runs.later_kept, runs.later_tested) == (3, 4, 5, 6)
    assert spec_math.runs_of([_round(1, 1, 1, 1), _round(1, 0, 1, 1)]).reading == "unknown"  # k = 1: no later guess
    assert spec_math.runs_of([]).reading == "unknown"
    assert spec_math.Runs(5, 5, 7, 7).reading == "chance"  # every guess kept: no spread, no difference
    opposite = spec_math.Runs(900, 1000, 100, 900)
    assert opposite.reading == "opposite" and opposite.z < -spec_math.RUNS_Z


def _round(drafted: int, accepted: int, draft_ms: float, verify_ms: float) -> Round:
    return Round(list(range(drafted)), accepted, 99, draft_ms, verify_ms)


def test_read_run_covers_every_round_and_times_both_sides_alike():
    plain = Decoded(tokens=list(range(10)), step_ms=[8.0] * 9, token_ms=[10.0] * 9)
    run = Speculated(draft="x", k=4, rounds=[_round(4, 4, 4.0, 20.0), _round(4, 0, 4.0, 20.0),
                                                _round(2, 1, 2.0, 20.0), _round(0, 0, 0.5, 12.0)])
    read = spec_math.read_run(plain, run)
    assert (read.rounds, read.full_rounds, read.drafted, read.accepted, read.rejected) == (4, 2, 10, 5, 2)
    assert read.tested == 7 and read.alpha == pytest.approx(5 / 7)  # not 5 / 10: three guesses never tested
    assert read.draft_acceptance_rate == pytest.approx(0.5)
    assert read.tokens_per_round == pytest.approx((5 + 1 + 2 + 1) / 4)
    assert read.c == pytest.approx(10.5 / 10 / 10.0)  # every round's draft time ÷ guesses ÷ plain token time
    assert read.verify == pytest.approx(18.0 / 10.0)
    spec_ms = (4 + 20 + 4 + 20 + 2 + 20 + 0.5 + 12) / (5 + 1 + 2 + 1)
    assert read.speedup == pytest.approx(10.0 / spec_ms)  # token_ms, not the forward pass alone (step_ms)
    lengths, a = (4, 4, 2, 0), 5 / 7
    tokens = sum(spec_math.expected_tokens(a, d) for d in lengths)
    assert read.predicted_tokens == pytest.approx(tokens / 4)
    assert read.predicted_speedup == pytest.approx(tokens / sum(d * read.c + 1 for d in lengths))
    assert read.predicted_with_verify == pytest.approx(tokens / sum(d * read.c + read.verify for d in lengths))
    # counting the verify pass's measured cost, prediction and measurement differ only by the tokens per round
    assert read.predicted_with_verify / read.speedup == pytest.approx(read.predicted_tokens / read.tokens_per_round)
    with pytest.raises(ValueError):
        spec_math.read_run(Decoded(step_ms=[1.0]), run)  # no token timed with its choice
    with pytest.raises(ValueError):
        spec_math.read_run(plain, Speculated(draft="x", k=4, rounds=[_round(0, 0, 1.0, 9.0)]))  # nothing guessed
