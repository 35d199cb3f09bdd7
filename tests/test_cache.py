"""The KV cache: measured bytes equal the formula, the calculator presets equal hand computation."""
import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core import cache as kvc
from autoreg_ui.figures import cache as fig_cache

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=60)


def test_formula_by_hand():
    # 2 × layers × batch × kv_heads × head_dim × positions × bytes
    assert kvc.kv_cache_bytes(30, 3, 64, 8192, 4) == 2 * 30 * 3 * 64 * 8192 * 4 == 377_487_360
    assert kvc.kv_cache_bytes(2, 2, 16, 10, 4, batch=3) == 2 * 2 * 3 * 2 * 16 * 10 * 4 == 15_360
    assert kvc.kv_cache_bytes(1, 1, 1, 0, 2) == 0
    assert kvc.kv_cache_bytes(1, 1, 2, 3, 0.5) == 6  # 4-bit: half a byte per element
    assert kvc.bytes_per_position(30, 3, 64, 4) == 46_080
    for bad in (dict(positions=-1), dict(n_layers=1.5), dict(bytes_per_element=0)):
        args = dict(n_layers=2, n_kv_heads=2, head_dim=4, positions=3, bytes_per_element=2) | bad
        with pytest.raises(ValueError):
            kvc.kv_cache_bytes(**args)


@pytest.mark.parametrize("steps", [0, 1, 5, 17])
def test_measured_bytes_equal_formula(tiny, steps):
    s = Session(tiny, "The cat sat on the mat.")
    s.prefill()
    s.generate(steps, GREEDY)
    positions = s.prompt_len + steps
    assert s.cache_len == positions
    formula = kvc.kv_cache_bytes(tiny.n_layers, tiny.n_kv_heads, tiny.head_dim, positions, 4)
    assert kvc.measured_bytes(s.cache) == formula == s.cache_bytes
    assert kvc.formula_bytes_for(tiny, positions) == formula
    shapes = kvc.layer_shapes(s.cache)
    assert len(shapes) == tiny.n_layers
    for row in shapes:
        assert row.keys == row.values == (1, tiny.n_kv_heads, positions, tiny.head_dim)
        assert row.dtype == "float32"


def test_timeline_prefill_jump_then_one_row_per_step(tiny):
    s = Session(tiny, "Once upon a time there was")
    assert kvc.cache_timeline(s) == [] and kvc.phase_times(s) is None
    s.generate(6, GREEDY)
    s.undo()
    points = kvc.cache_timeline(s)
    P = s.prompt_len
    assert [p.phase for p in points] == ["prefill"] + ["decode"] * 5
    assert [p.positions for p in points] == [P + i for i in range(6)]
    assert all(p.measured_bytes == p.formula_bytes for p in points)
    assert points[1].measured_bytes - points[0].measured_bytes == kvc.bytes_per_position(
        tiny.n_layers, tiny.n_kv_heads, tiny.head_dim, 4)
    # after undo the live cache is one row shorter and still matches
    assert kvc.measured_bytes(s.cache) == points[-1].measured_bytes

    times = kvc.phase_times(s)
    assert times.prefill_tokens == P and times.decode_steps == 5
    assert times.prefill_ms_per_token == pytest.approx(s.prefill_record.time_ms / P)
    assert times.ratio == pytest.approx(times.decode_ms_median / times.prefill_ms_per_token)

    fig = fig_cache.cache_growth_figure(points, kvc.bytes_per_position(tiny.n_layers, tiny.n_kv_heads,
                                                                       tiny.head_dim, 4))
    line = fig.data[0]
    assert list(line.y[:2]) == [0, P] and list(line.x[:2]) == [0, 0]  # empty → prompt at once
    assert list(fig.data[1].y) == [p.measured_bytes for p in points]


def test_presets_by_hand():
    gpt2 = kvc.PRESETS["GPT-2 Small"]
    assert (gpt2.n_layers, gpt2.n_heads, gpt2.head_dim) == (12, 12, 64)
    assert gpt2.cache_bytes() == 2 * 12 * 12 * 64 * 1024 * 2 == 37_748_736  # 36 MiB in fp16
    assert gpt2.cache_bytes(seq_len=8192) == 301_989_888  # 288 MiB
    assert gpt2.weight_bytes() == 248_879_616

    seven = kvc.PRESETS["7B model, 128K context"]
    assert seven.n_layers == 32 and seven.seq_len == 131_072
    assert seven.cache_bytes() == 2 * 32 * 32 * 128 * 131_072 * 2 == 68_719_476_736  # 64 GiB
    assert seven.weight_bytes() == 14_000_000_000

    seventy = kvc.PRESETS["70B model with GQA, 4K tokens"]
    assert (seventy.n_layers, seventy.n_kv_heads, seventy.seq_len) == (80, 8, 4096)
    assert seventy.cache_bytes() == 2 * 80 * 8 * 128 * 4096 * 2 == 1_342_177_280  # 1.25 GiB
    assert seventy.cache_bytes_without_gqa() == 8 * 1_342_177_280  # 64 query heads: 8× more
    assert seventy.cache_bytes(batch=32, bytes_per_element=1) == 32 * 1_342_177_280 // 2
    assert seventy.weight_bytes(bytes_per_element=0.5) == 35_000_000_000


def test_loaded_model_preset(tiny):
    shape = kvc.shape_of_bundle(tiny)
    assert (shape.n_layers, shape.n_kv_heads, shape.head_dim, shape.bytes_per_element) == (2, 2, 16, 4)
    assert shape.seq_len == tiny.max_positions == 256
    assert shape.cache_bytes() == 2 * 2 * 2 * 16 * 256 * 4 == 131_072
    assert shape.weight_bytes() == tiny.n_params * 4


def test_precisions_and_units():
    assert kvc.PRECISIONS["float32"] == 4 and kvc.PRECISIONS["float16 / bfloat16"] == 2
    assert kvc.precision_name(2) == "float16 / bfloat16" and kvc.precision_name(3) == "3 bytes"
    assert kvc.dtype_bytes(torch.bfloat16) == 2
    assert kvc.human_bytes(512) == "512 B"
    assert kvc.human_bytes(1536) == "1.50 KiB"
    assert kvc.human_bytes(68_719_476_736) == "64.00 GiB"


def test_memory_and_phase_figures():
    shape = kvc.PRESETS["70B model with GQA, 4K tokens"]
    fig = fig_cache.memory_figure(shape, 4096, 1, 2)
    cache_line, weights_line, marker = fig.data
    assert marker.y[0] == pytest.approx(1.25)  # GiB
    assert weights_line.y[0] == pytest.approx(70e9 * 2 / 1024 ** 3)
    assert cache_line.y[0] == 0 and max(cache_line.x) == 8192
    bars = fig_cache.phase_times_figure(2.0, 30.0, 12)
    assert list(bars.data[0].y) == [2.0, 30.0]
    assert fig_cache.cache_growth_figure([], 1.0).data == ()
