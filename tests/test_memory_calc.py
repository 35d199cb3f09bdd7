"""The memory calculator's controller: presets, two precisions, stale values (plain dicts as state)."""
from dataclasses import replace

import pytest

from autoreg_core.spec import PRECISIONS, PRESETS
from autoreg_ui import keys, memory_calc
from autoreg_ui.format import human_bytes

GIB = 1024 ** 3


@pytest.fixture()
def choices(tiny):
    return memory_calc.presets(tiny.spec)


def test_presets_start_with_the_loaded_model_at_full_context(tiny, choices):
    assert list(choices) == [memory_calc.LOADED, *PRESETS]
    here = choices[memory_calc.LOADED]
    assert here.seq_len == tiny.spec.max_positions == 256
    assert here.cache_bytes() == 2 * 2 * 2 * 16 * 256 * 4 == 131_072
    assert here.weight_bytes == tiny.spec.n_params * 4
    assert memory_calc.preset_label(memory_calc.LOADED, "tiny") == "Loaded model (tiny)"
    assert memory_calc.preset_label("GPT-2 Small", "tiny") == "GPT-2 Small"


def test_first_visit_loads_the_loaded_model(choices):
    state = {}
    memory_calc.settle(state, choices)
    assert state == {keys.ATT_PRESET: memory_calc.LOADED, keys.ATT_SEQ: 256, keys.ATT_BATCH: 1,
                     keys.ATT_PRECISION: "float32", keys.ATT_CACHE_PRECISION: "float32"}


def test_choosing_a_preset_moves_the_widgets(choices):
    state = {keys.ATT_PRESET: "70B model, 4-bit weights + 16-bit cache, 128K"}
    memory_calc.load_preset(state, choices)
    assert (state[keys.ATT_SEQ], state[keys.ATT_BATCH]) == (131_072, 1)
    assert (state[keys.ATT_PRECISION], state[keys.ATT_CACHE_PRECISION]) == ("4-bit", "float16 / bfloat16")
    calc = memory_calc.chosen(state, choices)
    assert calc.cache_bytes() == 2 * 80 * 8 * 128 * 131_072 * 2 == 40 * GIB
    assert calc.weight_bytes == 70_553_706_496 // 2


def test_weights_and_cache_precisions_are_independent(choices):
    state = {keys.ATT_PRESET: "70B model with GQA, 4K tokens"}
    memory_calc.load_preset(state, choices)
    base = memory_calc.chosen(state, choices)
    assert (base.cache_bytes(), base.weight_bytes) == (1_342_177_280, 68_976_648_192 * 2)
    state[keys.ATT_PRECISION] = "4-bit"  # quantise the weights only
    calc = memory_calc.chosen(state, choices)
    assert (calc.cache_bytes(), calc.weight_bytes) == (1_342_177_280, 68_976_648_192 // 2)
    state[keys.ATT_CACHE_PRECISION] = "int8 / fp8"  # then the cache
    calc = memory_calc.chosen(state, choices)
    assert (calc.cache_bytes(), calc.weight_bytes) == (1_342_177_280 // 2, 68_976_648_192 // 2)


def test_length_and_batch_scale_the_cache_only(choices):
    state = {keys.ATT_PRESET: "70B model with GQA, 4K tokens"}
    memory_calc.load_preset(state, choices)
    state[keys.ATT_BATCH] = 8
    calc = memory_calc.chosen(state, choices)
    assert (calc.seq_len, calc.batch) == (4096, 8)
    assert human_bytes(calc.cache_bytes()) == "10.00 GiB"
    assert calc.without_gqa().cache_bytes() == 8 * calc.cache_bytes()  # 64 query heads over 8 K/V heads
    assert calc.weight_bytes == 68_976_648_192 * 2


def test_large_presets_at_long_context():
    """The seeds' "tens of gigabytes" for long contexts, from published shapes in 16 bits."""
    expected = {"7B model, 128K context": 64 * GIB, "8B model with GQA, 128K context": 16 * GIB,
                "70B model with GQA, 128K context": 40 * GIB}
    assert {name: PRESETS[name].cache_bytes() for name in expected} == expected
    assert PRESETS["8B model with GQA, 128K context"].without_gqa().cache_bytes() == 64 * GIB


@pytest.mark.parametrize("stale", [
    {keys.ATT_SEQ: 1000}, {keys.ATT_PRECISION: "float8"}, {keys.ATT_CACHE_PRECISION: None},
    {keys.ATT_BATCH: 0}, {keys.ATT_BATCH: 999}, {keys.ATT_BATCH: "8"}])
def test_stale_values_are_replaced_by_the_preset(choices, stale):
    state = {keys.ATT_PRESET: "GPT-2 Small", keys.ATT_SEQ: 4096, keys.ATT_BATCH: 4,
             keys.ATT_PRECISION: "4-bit", keys.ATT_CACHE_PRECISION: "float32"} | stale
    memory_calc.settle(state, choices)
    assert state == {keys.ATT_PRESET: "GPT-2 Small", keys.ATT_SEQ: 1024, keys.ATT_BATCH: 1,
                     keys.ATT_PRECISION: "float16 / bfloat16", keys.ATT_CACHE_PRECISION: "float16 / bfloat16"}


def test_good_values_are_kept(choices):
    state = {keys.ATT_PRESET: "GPT-2 Small", keys.ATT_SEQ: 4096, keys.ATT_BATCH: 4,
             keys.ATT_PRECISION: "4-bit", keys.ATT_CACHE_PRECISION: "float32"}
    before = dict(state)
    memory_calc.settle(state, choices)
    assert state == before


def test_unknown_preset_falls_back_to_the_loaded_model(choices):
    state = {keys.ATT_PRESET: "a model another page left", keys.ATT_SEQ: 4096, keys.ATT_BATCH: 4,
             keys.ATT_PRECISION: "4-bit", keys.ATT_CACHE_PRECISION: "4-bit"}
    memory_calc.settle(state, choices)
    assert (state[keys.ATT_PRESET], state[keys.ATT_SEQ], state[keys.ATT_PRECISION]) == (
        memory_calc.LOADED, 256, "float32")


def test_an_odd_precision_shows_as_16_bit(choices):
    odd = {"odd": replace(PRESETS["GPT-2 Small"], weight_bytes_per_param=3)} | choices
    state = {keys.ATT_PRESET: "odd"}
    memory_calc.load_preset(state, odd)
    assert state[keys.ATT_PRECISION] == "float16 / bfloat16" and state[keys.ATT_PRECISION] in PRECISIONS


def test_sequence_options_and_labels():
    assert memory_calc.SEQ_OPTIONS[0] == 16 and memory_calc.SEQ_OPTIONS[-1] == 1_048_576
    assert len(memory_calc.SEQ_OPTIONS) == 17
    assert [memory_calc.seq_label(s) for s in (16, 512, 1024, 131_072)] == ["16", "512", "1K", "128K"]
