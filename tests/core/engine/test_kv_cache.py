"""The KV cache: bytes measured from the tensors equal ``ModelSpec``'s formula exactly, step by step.

Covers ``autoreg_core.engine.kv_cache`` and the cache figure builders.
"""
import math

import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine import kv_cache as kvc
from autoreg_core.engine.model_spec import PRESETS
from autoreg_ui.lessons.attention import figures as fig_cache

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=60)


def test_tiny_spec_by_hand(tiny):
    """The numbers the measured bytes are held against: 2 × layers × kv_heads × head_dim × 4 bytes."""
    spec = tiny.spec
    assert (spec.n_layers, spec.n_kv_heads, spec.head_dim, spec.cache_bytes_per_element) == (2, 2, 16, 4)
    assert spec.cache_bytes_per_position == 2 * 2 * 2 * 16 * 4 == 512


@pytest.mark.parametrize("steps", [0, 1, 5, 17])
def test_measured_bytes_equal_formula(tiny, steps):
    s = Session(tiny, "The cat sat on the mat.")
    s.prefill()
    s.generate(steps, GREEDY)
    positions = s.prompt_len + steps
    assert s.cache_len == positions
    formula = 512 * positions
    assert kvc.measured_bytes(s.cache) == formula == tiny.spec.cache_bytes(positions) == s.cache_bytes
    shapes = kvc.layer_shapes(s.cache)
    assert kvc.measured_bytes(s.cache) == sum(row.nbytes for row in shapes)  # the fast count, row by row
    assert [row.layer for row in shapes] == list(range(tiny.spec.n_layers))
    for row in shapes:
        assert row.keys == row.values == (1, tiny.spec.n_kv_heads, positions, tiny.spec.head_dim)
        assert row.dtype == "float32"
        assert row.nbytes == formula // tiny.spec.n_layers


def test_no_cache_measures_zero():
    assert kvc.layer_shapes(None) == [] and kvc.measured_bytes(None) == 0


def test_timeline_prefill_jump_then_one_row_per_step(tiny):
    s = Session(tiny, "Once upon a time there was")
    assert kvc.cache_timeline(s) == [] and kvc.phase_times(s) is None
    s.generate(6, GREEDY)
    s.undo()
    points = kvc.cache_timeline(s)
    P = s.prompt_len
    assert [p.step for p in points] == [0, 1, 2, 3, 4, 5]
    assert [p.phase for p in points] == ["prefill"] + ["decode"] * 5
    assert [p.positions for p in points] == [P + i for i in range(6)]
    assert [p.measured_bytes for p in points] == [p.formula_bytes for p in points] == [512 * (P + i) for i in range(6)]
    assert [p.ms for p in points] == [s.prefill_record.time_ms] + [r.forward_ms for r in s.records]
    assert kvc.measured_bytes(s.cache) == points[-1].measured_bytes  # after undo the live cache is one row shorter

    times = kvc.phase_times(s)
    assert times.prefill_tokens == P and times.decode_steps == 5
    assert times.prefill_ms_per_token == pytest.approx(s.prefill_record.time_ms / P)
    assert times.ratio == pytest.approx(times.decode_ms_median / times.prefill_ms_per_token)

    fig = fig_cache.cache_growth_figure(points, tiny.spec.cache_bytes_per_position)
    line = fig.data[0]
    assert list(line.x) == [0, 0, 1, 2, 3, 4, 5] and list(line.y) == [0] + [P + i for i in range(6)]  # jump, then +1
    assert list(fig.data[1].y) == [p.measured_bytes for p in points]
    assert fig.layout.yaxis2.range[1] == pytest.approx(fig.layout.yaxis.range[1] * 512)  # one shared scale


def test_phase_times_measured_from_a_prefill_and_decode_steps():
    times = kvc.PhaseTimes.measured(30.0, 10, [4.0, 6.0, 5.0])
    assert (times.prefill_ms_per_token, times.decode_steps, times.decode_ms_median) == (3.0, 3, 5.0)
    assert times.ratio == pytest.approx(5.0 / 3.0)
    empty = kvc.PhaseTimes.measured(30.0, 0, [])
    assert empty.prefill_ms_per_token == 30.0 and empty.decode_steps == 0 and math.isnan(empty.decode_ms_median)


def test_phase_ratio_without_prefill_time_is_nan():
    times = kvc.PhaseTimes(prefill_tokens=3, prefill_ms=0.0, prefill_ms_per_token=0.0, decode_steps=2,
                           decode_ms_median=5.0)
    assert math.isnan(times.ratio)


def test_worked_example_fifty_plus_hundred(tiny):
    ex = kvc.worked_example(tiny.spec)
    assert (ex.prompt_tokens, ex.new_tokens, ex.positions) == (50, 100, 150)
    assert (ex.after_prefill, ex.per_token, ex.at_end) == (50 * 512, 512, 150 * 512)
    big = kvc.worked_example(PRESETS["70B model with GQA, 4K tokens"], 1000, 24)
    assert big.at_end == 2 * 80 * 8 * 128 * 1024 * 2


def test_worked_example_on_a_session_matches_the_live_cache(tiny):
    """The worked example's formula bytes are what a real session measures at 5 prompt + 7 new tokens."""
    s = Session(tiny, "The cat sat on the mat.")
    s.generate(7, GREEDY)
    ex = kvc.worked_example(tiny.spec, s.prompt_len, 7)
    assert (ex.after_prefill, ex.at_end) == (s.prefill_record.cache_bytes, kvc.measured_bytes(s.cache))


def test_positions_processed_is_the_seeds_50_plus_100_example():
    from autoreg_core.engine.kv_cache import positions_processed

    assert positions_processed(50, 100, cached=False) == sum(range(50, 150)) == 9950
    assert positions_processed(50, 100, cached=True) == 149  # 50 in the prefill + 99 fed one at a time
    assert positions_processed(0, 1000, cached=False) == 1000 * 999 // 2
    assert positions_processed(50, 0, cached=True) == positions_processed(50, 0, cached=False) == 0
