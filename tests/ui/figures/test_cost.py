"""The cost page's figures: step times and speedup, the counts against the measurements, roofline and bytes."""
from __future__ import annotations

import numpy as np
import pytest

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments import kv_cost as cost
from autoreg_ui.lessons.cost import figures as figs

# A hand-made shape: 2 layers, 4 heads of 16, 2 KV heads, d = 64, V = 100, 1000 weights in the layers.
SPEC = ModelSpec(name="hand", n_layers=2, n_heads=4, n_kv_heads=2, head_dim=16, hidden=64, vocab=100,
                 n_params=7400, body_params=1000, max_positions=256)


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
    assert list(cum.data[1].y) == pytest.approx(list(cost.cumulative_ms(pts)["cached"] / 1000))


def test_theory_figure_draws_the_counts_and_aligns_axes():
    pts = _points()
    scale = {k: cost.flops_per_ms(SPEC, pts, k == "cached") for k in ("naive", "cached")}
    fig = figs.theory_figure(SPEC, 64, pts, cost.fits(pts), scale)
    naive_line = fig.data[0]
    assert list(naive_line.y) == pytest.approx([SPEC.flops_step(int(L), False) / 1e9 for L in naive_line.x])
    assert fig.layout.yaxis2.range[1] == pytest.approx(fig.layout.yaxis.range[1] * 1e9 / scale["naive"])
    assert len(figs.theory_figure(SPEC, 64).data) == 2  # without measurements: only the two counted curves


def test_roofline_and_bytes_figures():
    fig = figs.roofline_figure(10e9, 50e9, [{"name": "decode", "intensity": 0.5, "achieved": 4e9}])
    assert np.array(fig.data[0].y).max() == pytest.approx(50.0)  # GFLOP/s: the compute roof
    assert (fig.data[1].x[0], fig.data[1].y[0]) == (0.5, pytest.approx(4.0))
    bars = figs.bytes_figure(3 * 2**20, 2**19, "t")
    assert [b.x[0] for b in bars.data] == [3.0, 0.5]  # MiB
    assert bars.layout.xaxis.title.text == "MiB"
