"""Prefill vs decode: the timed greedy loop, the prefill sweep and the worked example's counts (tiny model)."""
from __future__ import annotations

import math

import pytest

from autoreg_core import ModelBundle, SamplingConfig, Session
from autoreg_core.engine.decode import new_cache
from autoreg_core.engine.kv_cache import PhaseTimes
from autoreg_core.experiments import prefill_decode as phases

PROMPT = "Once upon a time there was a small village by the sea"


def _ids(bundle) -> list[int]:
    return bundle.tokenizer(PROMPT)["input_ids"]


def test_greedy_run_writes_what_a_greedy_session_writes(tiny):
    session = Session(tiny, PROMPT)
    session.generate(12, SamplingConfig(temperature=0.0, max_new_tokens=100))
    run = phases.greedy_run(tiny, session.prompt_ids, 12)
    assert run.ids == session.ids and len(run.generated_ids) == 12
    assert run.prompt_len == session.prompt_len


def test_greedy_run_counts_its_passes_and_measures_the_cache(tiny):
    ids = _ids(tiny)
    run = phases.greedy_run(tiny, ids, 9)
    P = len(ids)
    assert len(run.step_ms) == 8  # the first token comes out of the prefill
    assert run.cache_positions == list(range(P, P + 9))  # the last token is chosen, never fed
    assert run.cache_bytes == [tiny.spec.cache_bytes(n) for n in run.cache_positions]
    assert run.decode_tokens_per_second == pytest.approx(1000 * 8 / sum(run.step_ms))
    assert run.prefill_ms_per_token == pytest.approx(run.prefill_ms / P)
    assert run.first_token_ms >= run.prefill_ms  # the prefill is part of the time to first token
    assert not run.stopped_early


def test_eos_ends_a_run_unless_told_otherwise(tiny, monkeypatch):
    ids = _ids(tiny)
    first = phases.greedy_run(tiny, ids, 1).generated_ids[0]
    monkeypatch.setattr(ModelBundle, "eos_token_ids", property(lambda self: [first]))
    assert phases.greedy_run(tiny, ids, 6).generated_ids == [first]
    assert len(phases.greedy_run(tiny, ids, 6, stop_at_eos=False).generated_ids) == 6


def test_should_stop_ends_a_run_early(tiny):
    run = phases.greedy_run(tiny, _ids(tiny), 6, should_stop=lambda: True)
    assert run.stopped_early and len(run.generated_ids) == 1 and run.step_ms == []
    assert math.isnan(run.decode_ms_median)


def test_greedy_run_refuses_nothing(tiny):
    with pytest.raises(ValueError):
        phases.greedy_run(tiny, [], 3)
    with pytest.raises(ValueError):
        phases.greedy_run(tiny, _ids(tiny), 0)


def test_stored_positions(tiny):
    cache = new_cache(tiny)
    assert phases.stored_positions(cache) == 0
    phases.greedy_run(tiny, _ids(tiny), 3, cache=cache)
    assert phases.stored_positions(cache) == len(_ids(tiny)) + 2


@pytest.mark.parametrize("n_tokens, max_positions, expected", [
    (700, 8192, [8, 16, 32, 64, 128, 256, 512, 700]),
    (700, 256, [8, 16, 32, 64, 128, 255]),
    (64, 8192, [8, 16, 32, 64]),
    (5, 100, [5]),
    (0, 100, []),
])
def test_sweep_lengths(n_tokens, max_positions, expected):
    assert phases.sweep_lengths(n_tokens, max_positions) == expected


def test_prefill_sweep_measures_every_length_in_order(tiny):
    ids = _ids(tiny) * 4
    seen = []
    points = phases.prefill_sweep(tiny, ids, [16, 4, 8], repeats=1, on_point=seen.append)
    assert [p.length for p in points] == [4, 8, 16]
    assert seen == points
    for p in points:
        assert p.prefill_ms_per_token == pytest.approx(p.prefill_ms / p.length)
        assert p.decode_over_prefill == pytest.approx(p.decode_ms / p.prefill_ms_per_token)


def test_prefill_sweep_stops_when_asked(tiny):
    asked = []

    def third_time() -> bool:
        asked.append(1)
        return len(asked) == 3

    points = phases.prefill_sweep(tiny, _ids(tiny), [2, 4, 6], repeats=1, should_stop=third_time)
    assert [p.length for p in points] == [2, 4]


def test_measure_prefill_stays_inside_the_prompt(tiny):
    ids = _ids(tiny)
    assert phases.measure_prefill(tiny, ids, len(ids), repeats=1).length == len(ids)
    with pytest.raises(ValueError):
        phases.measure_prefill(tiny, ids, len(ids) + 1)


def test_worked_example_counts(tiny):
    counts = phases.worked_counts(tiny.spec, 50, 100)
    heads = tiny.spec.n_layers * tiny.spec.n_heads
    assert counts.naive_positions == sum(range(50, 150)) == 9950
    assert counts.cached_positions == 50 + 99
    assert counts.naive_dot_products == heads * sum(L * (L + 1) // 2 for L in range(50, 150))
    assert counts.cached_dot_products == heads * sum(range(1, 150))
    with pytest.raises(ValueError):
        phases.worked_counts(tiny.spec, 0, 10)


def test_runs_and_sweep_points_read_their_times_through_phase_times():
    run = phases.GreedyRun(prompt_len=10, ids=list(range(14)), prefill_ms=20.0, first_token_ms=21.0,
                           step_ms=[3.0, 5.0, 4.0])
    assert run.phases == PhaseTimes.measured(20.0, 10, [3.0, 5.0, 4.0])
    assert (run.prefill_ms_per_token, run.decode_ms_median, run.decode_over_prefill) == (2.0, 4.0, 2.0)
    point = phases.PrefillPoint(length=8, prefill_ms=16.0, decode_ms=6.0)
    assert (point.prefill_ms_per_token, point.decode_over_prefill) == (2.0, 3.0)
    assert math.isnan(phases.PrefillPoint(length=8, prefill_ms=0.0, decode_ms=6.0).decode_over_prefill)
