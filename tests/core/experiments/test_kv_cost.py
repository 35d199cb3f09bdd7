"""The sweep's counts and shapes (never its speed), the fits and totals, and the cost figures.

Timings depend on the machine and its load, so nothing here compares one time with another: the
bench (``python -m bench``) reports them.
"""
from __future__ import annotations

import math

import pytest
from tiny import tiny_bundle

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments import kv_cost as cost

# A hand-made shape: 2 layers, 4 heads of 16, 2 KV heads, d = 64, V = 100, 1000 weights in the layers.
SPEC = ModelSpec(name="hand", n_layers=2, n_heads=4, n_kv_heads=2, head_dim=16, hidden=64, vocab=100,
                 n_params=7400, body_params=1000, max_positions=256)
QUICK = dict(warmup=False, cached_repeats=(1, 1), naive_repeats=(1, 1))


# ---------------------------------------------------------------- lengths
def test_sample_lengths():
    assert cost.sample_lengths(32) == [1, 2, 4, 8, 12, 16, 20, 24, 28, 32]
    assert cost.sample_lengths(1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 640, 768, 896, 1024]
    assert cost.sample_lengths(1) == [1]
    assert cost.sample_lengths(100)[-1] == 100
    with pytest.raises(ValueError):
        cost.sample_lengths(0)


# ---------------------------------------------------------------- the sweep
def test_sweep_lengths_repeats_and_cache_invariant(tiny):
    seen = []
    result = cost.sweep(tiny, [8, 1, 32, 16, 8], on_progress=lambda f, p: seen.append((f, p.length)),
                        cached_repeats=(3, 3), naive_repeats=(2, 2))
    assert result.lengths == [1, 8, 16, 32]
    assert [p.length for p in result.points] == [1, 8, 16, 32]
    assert result.complete and not result.stopped_early and result.remaining == []
    # the cache held exactly L − 1 tokens whenever a cached step at length L was timed (crop(-1) between repeats)
    assert [p.cache_positions for p in result.points] == [0, 7, 15, 31]
    assert [(p.cached_repeats, p.naive_repeats) for p in result.points] == [(3, 2)] * 4
    assert [L for _, L in seen] == [1, 8, 16, 32]
    assert [f for f, _ in seen] == pytest.approx([1 / 57, 9 / 57, 25 / 57, 1.0])
    assert (result.model, result.device, result.dtype) == ("tiny-llama", "cpu", "float32")


def test_repeats_stay_within_bounds(tiny):
    result = cost.sweep(tiny, [1, 4], warmup=False, cached_repeats=(2, 4), naive_repeats=(1, 3))
    assert len(result.points) == 2
    assert all(2 <= p.cached_repeats <= 4 and 1 <= p.naive_repeats <= 3 for p in result.points)


def test_sweep_rejects_bad_lengths(tiny):
    with pytest.raises(ValueError):
        cost.sweep(tiny, [0, 4])
    with pytest.raises(ValueError):
        cost.sweep(tiny, [tiny.spec.max_positions + 1])


def test_should_stop_keeps_what_was_measured(tiny):
    """The cancel hook the page relies on: measured points survive, the rest is skipped."""
    got = []
    calls = {"n": 0}

    def should_stop():
        calls["n"] += 1
        return len(got) >= 2

    result = cost.sweep(tiny, [1, 2, 4, 8, 16], should_stop=should_stop, on_progress=lambda f, p: got.append(p),
                        **QUICK)
    assert result.stopped_early and not result.complete
    assert [p.length for p in result.points] == [1, 2] == [p.length for p in got]
    assert result.lengths == [1, 2, 4, 8, 16] and result.last_length == 2
    assert result.remaining == [4, 8, 16]
    assert calls["n"] == 3  # checked before every length, and nothing was measured after it said stop


def test_should_stop_at_once(tiny):
    result = cost.sweep(tiny, [1, 2, 4], should_stop=lambda: True)
    assert result.stopped_early and result.points == [] and result.last_length == 0


def test_a_type_error_inside_the_model_is_not_hidden(monkeypatch):
    """The sweep calls ``decode.forward`` only; no retry swallows an error raised by the model."""
    bundle = tiny_bundle()

    def broken(*args, **kwargs):
        raise TypeError("broken layer")

    monkeypatch.setattr(bundle.model, "forward", broken)
    with pytest.raises(TypeError, match="broken layer"):
        cost.sweep(bundle, [1, 2], **QUICK)


def test_sweep_runs_on_the_embedded_model(embedded):
    result = cost.sweep(embedded, [1, 16], **QUICK)
    assert [(p.length, p.cache_positions) for p in result.points] == [(1, 0), (16, 15)] and result.complete


# ---------------------------------------------------------------- reading the measurements
def test_fits_recover_known_curves():
    pts = [cost.CostPoint(L, 5.0 + 0.01 * L, 1.0 + 0.5 * L + 0.002 * L * L, 3, 1) for L in (1, 10, 50, 100, 200)]
    f = cost.fits(pts)
    assert f["naive"].coeffs == pytest.approx([0.002, 0.5, 1.0], rel=1e-6, abs=1e-9)
    assert f["cached"].coeffs == pytest.approx([0.01, 5.0], rel=1e-6)
    assert f["naive"].r2 == pytest.approx(1.0)
    assert list(f["cached"]([0, 100])) == pytest.approx([5.0, 6.0])
    assert cost.fit_poly([1, 2], [1, 2], 2) is None  # too few points for a quadratic


def test_cumulative_sums_interpolated_steps():
    pts = [cost.CostPoint(1, 2.0, 1.0, 3, 1), cost.CostPoint(5, 2.0, 5.0, 3, 1)]
    cum = cost.cumulative_ms(pts)
    assert list(cum["T"]) == [1, 2, 3, 4, 5]
    assert list(cum["cached"]) == pytest.approx([2, 4, 6, 8, 10])  # 5 steps of 2 ms
    assert list(cum["naive"]) == pytest.approx([1, 3, 6, 10, 15])  # interpolated 1..5 ms, summed
    assert len(cost.cumulative_ms([])["T"]) == 0


def test_flops_per_ms_recovers_a_constant_throughput():
    pts = [cost.CostPoint(L, SPEC.flops_step(L, True) / 7.0, SPEC.flops_step(L, False) / 3.0, 1, 1) for L in (1, 8, 64)]
    assert cost.flops_per_ms(SPEC, pts, cached=True) == pytest.approx(7.0)
    assert cost.flops_per_ms(SPEC, pts, cached=False) == pytest.approx(3.0)
    assert math.isnan(cost.flops_per_ms(SPEC, [cost.CostPoint(1, 0.0, 0.0, 1, 1)], cached=True))


def test_result_rows():
    r = cost.SweepResult("m", "cpu", "float32", [1, 2], [cost.CostPoint(1, 1.0, 1.5, 3, 2)], stopped_early=True)
    assert r.rows() == [{"length": 1, "cached_step_ms": 1.0, "naive_step_ms": 1.5, "speedup": 1.5,
                         "cached_repeats": 3, "naive_repeats": 2}]
    assert (r.last_length, r.remaining, r.complete) == (1, [2], False)


def test_busy_flag():
    assert cost.SweepResult("m", "cpu", "float32", [1], load_avg=5.0, cpu_count=2).busy
    assert not cost.SweepResult("m", "cpu", "float32", [1], load_avg=1.0, cpu_count=2).busy
    assert not cost.SweepResult("m", "cpu", "float32", [1]).busy  # unknown load: no claim


def test_machine_measurements():
    for value in (cost.measure_bandwidth("cpu", megabytes=8, repeats=2), cost.measure_matmul_flops("cpu", n=64)):
        assert math.isfinite(value) and value > 0
    info = cost.machine_info("cpu")
    assert {"cpu", "cpu_count", "torch", "torch_threads", "device", "load_avg_1min"} <= set(info)
    assert info["device"] == "cpu"


