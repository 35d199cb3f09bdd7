"""Counts against hand-computed values; the sweep, its cancel hook and the figure builders on small models."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from autoreg_core import bundle_from_model, cost
from autoreg_ui.figures import cost as figs

# A hand-made shape: 2 layers, 4 heads of 16, 2 KV heads, d = 64, V = 100, 1000 weights in the layers.
DIMS = cost.ModelDims(n_layers=2, n_heads=4, n_kv_heads=2, head_dim=16, hidden=64, vocab=100, n_params=7400,
                      body_params=1000, bytes_per_param=4)


# ---------------------------------------------------------------- counts
def test_positions_500500_vs_1000():
    assert cost.positions_total(1000, cached=False) == 500_500
    assert cost.positions_total(1000, cached=True) == 1000
    assert cost.positions_total(1, cached=False) == 1


def test_flops_per_step_by_hand():
    # cached, L = 10: 2·1000 + 2·64·100 + 4·2·4·16·10 = 2000 + 12800 + 5120
    assert cost.flops_step(DIMS, 10, cached=True) == 19_920
    # naive, L = 10: 10·2000 + 12800 + 4·2·4·16·55 = 20000 + 12800 + 28160
    assert cost.flops_step(DIMS, 10, cached=False) == 60_960
    # L = 1: both ways are the same single position
    assert cost.flops_step(DIMS, 1, cached=True) == cost.flops_step(DIMS, 1, cached=False) == 2000 + 12800 + 512


def test_dot_products_by_hand():
    assert cost.dot_products_step(DIMS, 10, cached=True) == 2 * 4 * 10
    assert cost.dot_products_step(DIMS, 10, cached=False) == 2 * 4 * 55
    assert cost.dot_products_total(DIMS, 3, cached=True) == 8 * (1 + 2 + 3)
    assert cost.dot_products_total(DIMS, 3, cached=False) == 8 * (1 + 3 + 6)


@pytest.mark.parametrize("T", [1, 2, 7, 50])
def test_totals_are_sums_of_steps(T):
    for cached in (True, False):
        assert cost.flops_total(DIMS, T, cached) == sum(cost.flops_step(DIMS, L, cached) for L in range(1, T + 1))
        assert cost.dot_products_total(DIMS, T, cached) == sum(
            cost.dot_products_step(DIMS, L, cached) for L in range(1, T + 1))


def test_bytes_and_intensity_by_hand():
    assert DIMS.cache_bytes_per_token == 2 * 2 * 2 * 16 * 4  # K and V · layers · KV heads · d_h · bytes = 512
    b = cost.decode_bytes(DIMS, 10)
    assert b == {"weights": (1000 + 6400) * 4, "cache": 5120, "total": 29_600 + 5120}
    assert cost.arithmetic_intensity(DIMS, 10, cached=True) == pytest.approx(19_920 / 34_720)
    assert cost.arithmetic_intensity(DIMS, 10, cached=False) == pytest.approx(60_960 / 29_600)


def test_count_table_rows():
    rows = {r["quantity"]: r for r in cost.count_table(DIMS, 1000)}
    pos = rows["token positions processed"]
    assert (pos["naive"], pos["KV cache"]) == (500_500, 1000)
    assert pos["naive / cached"] == pytest.approx(500.5)


def test_dims_from_tiny_model(tiny):
    dims = cost.ModelDims.from_bundle(tiny)
    # per layer: q 64·64 + k 64·32 + v 64·32 + o 64·64 + MLP 3·64·128 + two RMSNorms 2·64 = 36,992
    assert dims.body_params == 2 * 36_992 + 64  # + the final norm
    assert dims.n_params == dims.body_params + dims.vocab * dims.hidden  # tied embedding / LM head
    assert (dims.n_layers, dims.n_heads, dims.n_kv_heads, dims.head_dim, dims.bytes_per_param) == (2, 4, 2, 16, 4)


# ---------------------------------------------------------------- lengths, fits, totals
def test_sample_lengths():
    L = cost.sample_lengths(1024)
    assert L == sorted(set(L)) and L[0] == 1 and L[-1] == 1024
    assert {1, 2, 4, 64, 512, 1024} <= set(L)
    assert 10 <= len(L) <= 20  # enough for smooth curves, few enough for the time budget
    assert cost.sample_lengths(1) == [1]
    assert cost.sample_lengths(100)[-1] == 100
    with pytest.raises(ValueError):
        cost.sample_lengths(0)


def test_fits_recover_known_curves():
    pts = [cost.CostPoint(L, 5.0 + 0.01 * L, 1.0 + 0.5 * L + 0.002 * L * L, 3, 1) for L in (1, 10, 50, 100, 200)]
    f = cost.fits(pts)
    assert f["naive"].coeffs == pytest.approx([0.002, 0.5, 1.0], rel=1e-6, abs=1e-9)
    assert f["cached"].coeffs == pytest.approx([0.01, 5.0], rel=1e-6)
    assert f["naive"].r2 == pytest.approx(1.0)
    assert cost.fit_poly([1, 2], [1, 2], 2) is None  # too few points for a quadratic


def test_cumulative_sums_interpolated_steps():
    pts = [cost.CostPoint(1, 2.0, 1.0, 3, 1), cost.CostPoint(5, 2.0, 5.0, 3, 1)]
    cum = cost.cumulative_ms(pts)
    assert list(cum["T"]) == [1, 2, 3, 4, 5]
    assert cum["cached"][-1] == pytest.approx(10.0)  # 5 steps of 2 ms
    assert cum["naive"][-1] == pytest.approx(1 + 2 + 3 + 4 + 5)  # interpolated 1..5 ms
    assert len(cost.cumulative_ms([])["T"]) == 0


def test_result_round_trip():
    r = cost.SweepResult("m", "cpu", "float32", [1, 2], [cost.CostPoint(1, 1.0, 1.5, 3, 2)], stopped_early=True)
    back = cost.SweepResult.from_dict(r.to_dict())
    assert back == r and back.last_length == 1 and not back.complete
    assert back.rows()[0]["speedup"] == 1.5


# ---------------------------------------------------------------- the sweep
def test_sweep_lengths_and_cache(tiny):
    seen = []
    result = cost.sweep(tiny, [8, 1, 32, 16, 8], on_progress=lambda f, p: seen.append((f, p.length)))
    assert result.lengths == [1, 8, 16, 32]
    assert [p.length for p in result.points] == [1, 8, 16, 32]
    assert result.complete and not result.stopped_early
    assert all(p.cached_ms > 0 and p.naive_ms > 0 and p.cached_repeats >= 3 for p in result.points)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert [L for _, L in seen] == [1, 8, 16, 32]


def test_sweep_rejects_bad_lengths(tiny):
    with pytest.raises(ValueError):
        cost.sweep(tiny, [0, 4])
    with pytest.raises(ValueError):
        cost.sweep(tiny, [tiny.max_positions + 1])


def test_should_stop_ends_the_sweep_early(tiny):
    """The cancel hook the page's Stop button relies on: measured points survive, the rest is skipped."""
    got = []
    calls = {"n": 0}

    def should_stop():
        calls["n"] += 1
        return len(got) >= 2

    result = cost.sweep(tiny, [1, 2, 4, 8, 16], should_stop=should_stop, on_point=got.append)
    assert result.stopped_early and not result.complete
    assert [p.length for p in result.points] == [1, 2] == [p.length for p in got]
    assert result.lengths == [1, 2, 4, 8, 16] and result.last_length == 2
    assert calls["n"] == 3  # checked before every length, and nothing was measured after it said stop


def test_should_stop_at_once(tiny):
    result = cost.sweep(tiny, [1, 2, 4], should_stop=lambda: True)
    assert result.stopped_early and result.points == []


@pytest.fixture(scope="module")
def small():
    """A random Llama big enough that a forward pass of L tokens costs clearly more than of 1."""
    config = LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=1024, num_hidden_layers=4,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=64, max_position_embeddings=512,
                         tie_word_embeddings=True)
    torch.manual_seed(0)
    return bundle_from_model(LlamaForCausalLM(config), tokenizer=None, name="small-random")


def test_naive_time_grows_with_length(small):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: far steadier when other processes share the CPU
    try:
        result = cost.sweep(small, [1, 8, 64, 128, 256, 512], naive_repeats=(3, 5), cached_repeats=(3, 5))
    finally:
        torch.set_num_threads(threads)
    naive = {p.length: p.naive_ms for p in result.points}
    assert sorted(naive) == [1, 8, 64, 128, 256, 512]
    # monotone-ish: each doubling from 64 on costs more, and 512 positions cost far more than 1
    assert naive[512] > naive[256] > naive[128] > naive[64]
    assert naive[512] > 10 * naive[1]
    # the KV cache wins clearly at the longest length
    assert result.points[-1].speedup > 3


# ---------------------------------------------------------------- figures
def _points():
    return [cost.CostPoint(L, 2.0 + 0.001 * L, 1.0 + 0.1 * L, 3, 1) for L in (1, 4, 16, 64)]


def test_step_and_speedup_figures_carry_the_measurements():
    pts = _points()
    fig = figs.step_time_figure(pts, cost.fits(pts))
    assert list(fig.data[0].y) == [p.naive_ms for p in pts]
    assert list(fig.data[1].y) == [p.cached_ms for p in pts]
    assert len(fig.data) == 4  # + the two fits
    sp = figs.speedup_figure(pts)
    assert list(sp.data[0].y) == pytest.approx([p.naive_ms / p.cached_ms for p in pts])
    cum = figs.cumulative_figure(cost.cumulative_ms(pts))
    assert cum.data[0].y[-1] == pytest.approx(cost.cumulative_ms(pts)["naive"][-1] / 1000)


def test_theory_figure_aligns_axes():
    pts = _points()
    scale = {k: cost.flops_per_ms(DIMS, pts, k == "cached") for k in ("naive", "cached")}
    fig = figs.theory_figure(DIMS, 64, pts, cost.fits(pts), scale)
    left_top = fig.layout.yaxis.range[1] * 1e9
    right_top = fig.layout.yaxis2.range[1]
    assert right_top == pytest.approx(left_top / scale["naive"])
    # without measurements: only the two counted curves
    assert len(figs.theory_figure(DIMS, 64).data) == 2


def test_roofline_figure():
    fig = figs.roofline_figure(10e9, 50e9, [{"name": "decode", "intensity": 0.5, "achieved": 4e9}])
    roof = np.array(fig.data[0].y)
    assert roof.max() == pytest.approx(50.0)  # GFLOP/s: the compute roof
    assert fig.data[1].x[0] == 0.5 and fig.data[1].y[0] == pytest.approx(4.0)


def test_machine_measurements_are_positive():
    assert cost.measure_bandwidth("cpu", megabytes=8, repeats=2) > 1e8
    assert cost.measure_matmul_flops("cpu", n=128, repeats=2) > 1e7
    assert cost.machine_info("cpu")["cpu_count"] >= 1


def test_busy_flag():
    r = cost.SweepResult("m", "cpu", "float32", [1], load_avg=5.0, cpu_count=2)
    assert r.busy
    assert not cost.SweepResult("m", "cpu", "float32", [1], load_avg=1.0, cpu_count=2).busy
    assert not cost.SweepResult("m", "cpu", "float32", [1]).busy  # unknown load: no claim


def test_embedded_model_counts(embedded):
    """SmolLM2-135M: the numbers the page shows, against values worked out by hand."""
    dims = cost.ModelDims.from_bundle(embedded)
    assert dims.body_params == 134_515_008 - 49_152 * 576  # everything but the tied embedding / LM head
    assert dims.cache_bytes_per_token == 2 * 30 * 3 * 64 * 4 == 46_080  # K and V, fp32, GQA with 3 KV heads
    # one decode step at L = 1000: 2·106,203,456 + 2·576·49,152 + 4·30·9·64·1000
    assert cost.flops_step(dims, 1000, cached=True) == 212_406_912 + 56_623_104 + 69_120_000
    assert cost.dot_products_step(dims, 1000, cached=True) == 30 * 9 * 1000
    result = cost.sweep(embedded, [1, 16], cached_repeats=(1, 1), naive_repeats=(1, 1))
    assert [p.length for p in result.points] == [1, 16] and result.complete
