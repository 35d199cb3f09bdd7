"""The attention page's controller without Streamlit running: layer/head choice, one consistent read,
and the memory calculator (presets, two precisions, stale values), with plain dicts as state."""
from __future__ import annotations

from dataclasses import replace

import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine import kv_cache as kvc
from autoreg_core.engine.model_spec import PRECISIONS, PRESETS
from autoreg_core.experiments import attention_rows as av
from autoreg_ui import messages
from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.attention import controller as ac
from autoreg_ui.lessons.attention import keys

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=50)


@pytest.mark.parametrize("layer,head,expected", [
    (None, None, (15, 0)), (500, 42, (15, 0)), (-2, -2, (15, 0)), ("3", "1", (15, 0)), (True, 1.0, (15, 0)),
    (0, -1, (0, -1)), (29, 8, (29, 8)), (3, 9, (3, 0))])
def test_settle_layer_head(layer, head, expected):
    state = {k: v for k, v in ((keys.ATT_LAYER, layer), (keys.ATT_HEAD, head)) if v is not None}
    ac.settle_layer_head(state, 30, 9)
    assert (state[keys.ATT_LAYER], state[keys.ATT_HEAD]) == expected


def test_head_options_and_labels():
    gqa = av.gqa_info(9, 3)
    assert ac.head_options(9) == [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert [ac.head_label(h, gqa) for h in (-1, 0, 4)] == [
        "mean of all 9 heads", "head 0 (reads K/V head 0)", "head 4 (reads K/V head 1)"]
    assert [ac.head_index(h) for h in (-1, 0, 4)] == [None, 0, 4]
    assert [ac.head_name(h, 9) for h in (None, 3)] == ["mean of 9 heads", "head 3"]
    assert ac.inline_code("a`b") == "`aˋb`"
    assert [ac.first_shown(n) for n in (0, ac.MAX_TRIANGLE, ac.MAX_TRIANGLE + 7)] == [0, 0, 7]


def test_backfill_button_fills_and_says_so(tiny):
    s = Session(tiny, "The cat sat on the mat.")
    s.generate(3, GREEDY)
    state = {}
    assert ac.backfill(s, state) == s.prompt_len + 3
    assert messages.take(state) == [("success", f"Recomputed {s.prompt_len + 3} missing rows with one full "
                                                "forward pass.")]
    assert av.row_sources(s) == [av.PREFILL] * s.prompt_len + [av.DECODE] * 3


def test_backfill_button_refusal_is_a_message(tiny, monkeypatch):
    s = Session(tiny, "The cat sat on the mat.")
    s.prefill()
    monkeypatch.setattr(av, "MAX_FULL_TOKENS", 2)
    state = {}
    assert ac.backfill(s, state) == 0
    assert messages.take(state) == [("warning", f"The sequence has {s.prompt_len} tokens; recomputing every row "
                                                "is limited to 2 to keep memory per tab bounded.")]


def test_read_is_one_consistent_picture(tiny):
    s = Session(tiny, "The cat sat on the mat.", capture_attention=True)
    s.generate(4, GREEDY)
    pic = ac.read(s, 1, None)
    N = s.prompt_len + 4
    assert (pic.n_rows, pic.n_steps, pic.positions) == (N, 4, N)
    assert len(pic.labels) == N and pic.labels == [v.label for v in s.views()]
    assert pic.z.shape == (N, N) and pic.sources == [av.PREFILL] * s.prompt_len + [av.DECODE] * 4
    assert pic.latest[0] == N - 1 and pic.latest[1].shape == (tiny.spec.n_layers, tiny.spec.n_heads, N)
    assert pic.measured == tiny.spec.cache_bytes(N) and len(pic.shapes) == tiny.spec.n_layers
    assert [p.positions for p in pic.timeline] == [s.prompt_len + i for i in range(5)]
    assert pic.times.decode_steps == 4


def test_the_decode_time_compared_with_the_prefill_leaves_out_shared_passes(tiny):
    s = Session(tiny, "The cat sat on the mat.", capture_attention=True)
    s.generate(4, GREEDY)
    s.records[0].pass_rows, s.records[1].pass_rows = 3, 2  # as if two steps rode with other tabs' steps
    times = kvc.solo_phase_times(s)
    assert times.decode_steps == 2
    assert times.decode_ms_median == pytest.approx(sorted(r.forward_ms for r in s.records[2:])[0] / 2
                                                   + sorted(r.forward_ms for r in s.records[2:])[1] / 2)
    for r in s.records:
        r.pass_rows = 2
    assert kvc.solo_phase_times(s) is None  # the page then asks for a step, and says only solo steps are timed


GIB = 1024 ** 3


@pytest.fixture()
def choices(tiny):
    return ac.presets(tiny.spec)


def test_presets_start_with_the_loaded_model_at_full_context(tiny, choices):
    assert list(choices) == [ac.LOADED, *PRESETS]
    here = choices[ac.LOADED]
    assert here.seq_len == tiny.spec.max_positions == 256
    assert here.cache_bytes() == 2 * 2 * 2 * 16 * 256 * 4 == 131_072
    assert here.weight_bytes == tiny.spec.n_params * 4
    assert ac.preset_label(ac.LOADED, "tiny") == "Loaded model (tiny)"
    assert ac.preset_label("GPT-2 Small", "tiny") == "GPT-2 Small"


def test_first_visit_loads_the_loaded_model(choices):
    state = {}
    ac.settle(state, choices)
    assert state == {keys.ATT_PRESET: ac.LOADED, keys.ATT_SEQ: 256, keys.ATT_BATCH: 1,
                     keys.ATT_PRECISION: "float32", keys.ATT_CACHE_PRECISION: "float32"}


def test_choosing_a_preset_moves_the_widgets(choices):
    state = {keys.ATT_PRESET: "70B model, 4-bit weights + 16-bit cache, 128K"}
    ac.load_preset(state, choices)
    assert (state[keys.ATT_SEQ], state[keys.ATT_BATCH]) == (131_072, 1)
    assert (state[keys.ATT_PRECISION], state[keys.ATT_CACHE_PRECISION]) == ("4-bit, Q4_1 (5 bits with its scales)",
                                                                            "float16 / bfloat16")
    calc = ac.chosen(state, choices)
    assert calc.cache_bytes() == 2 * 80 * 8 * 128 * 131_072 * 2 == 40 * GIB
    assert calc.weight_bytes == round(70_553_706_496 * 5 / 8)  # 4-bit values + Q4_1 block scales


def test_weights_and_cache_precisions_are_independent(choices):
    state = {keys.ATT_PRESET: "70B model with GQA, 4K tokens"}
    ac.load_preset(state, choices)
    base = ac.chosen(state, choices)
    assert (base.cache_bytes(), base.weight_bytes) == (1_342_177_280, 68_976_648_192 * 2)
    state[keys.ATT_PRECISION] = "4-bit, Q4_1 (5 bits with its scales)"  # quantise the weights only
    calc = ac.chosen(state, choices)
    assert (calc.cache_bytes(), calc.weight_bytes) == (1_342_177_280, round(68_976_648_192 * 5 / 8))
    state[keys.ATT_CACHE_PRECISION] = "int8 / fp8"  # then the cache
    calc = ac.chosen(state, choices)
    assert (calc.cache_bytes(), calc.weight_bytes) == (1_342_177_280 // 2, round(68_976_648_192 * 5 / 8))


def test_length_and_batch_scale_the_cache_only(choices):
    state = {keys.ATT_PRESET: "70B model with GQA, 4K tokens"}
    ac.load_preset(state, choices)
    state[keys.ATT_BATCH] = 8
    calc = ac.chosen(state, choices)
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
             keys.ATT_PRECISION: "4-bit, Q4_1 (5 bits with its scales)", keys.ATT_CACHE_PRECISION: "float32"} | stale
    ac.settle(state, choices)
    assert state == {keys.ATT_PRESET: "GPT-2 Small", keys.ATT_SEQ: 1024, keys.ATT_BATCH: 1,
                     keys.ATT_PRECISION: "float16 / bfloat16", keys.ATT_CACHE_PRECISION: "float16 / bfloat16"}


def test_good_values_are_kept(choices):
    state = {keys.ATT_PRESET: "GPT-2 Small", keys.ATT_SEQ: 4096, keys.ATT_BATCH: 4,
             keys.ATT_PRECISION: "4-bit, Q4_1 (5 bits with its scales)", keys.ATT_CACHE_PRECISION: "float32"}
    before = dict(state)
    ac.settle(state, choices)
    assert state == before


def test_unknown_preset_falls_back_to_the_loaded_model(choices):
    state = {keys.ATT_PRESET: "a model another page left", keys.ATT_SEQ: 4096, keys.ATT_BATCH: 4,
             keys.ATT_PRECISION: "4-bit, Q4_1 (5 bits with its scales)",
             keys.ATT_CACHE_PRECISION: "4-bit, Q4_1 (5 bits with its scales)"}
    ac.settle(state, choices)
    assert (state[keys.ATT_PRESET], state[keys.ATT_SEQ], state[keys.ATT_PRECISION]) == (
        ac.LOADED, 256, "float32")


def test_an_odd_precision_shows_as_16_bit(choices):
    odd = {"odd": replace(PRESETS["GPT-2 Small"], weight_bytes_per_param=3)} | choices
    state = {keys.ATT_PRESET: "odd"}
    ac.load_preset(state, odd)
    assert state[keys.ATT_PRECISION] == "float16 / bfloat16" and state[keys.ATT_PRECISION] in PRECISIONS


def test_sequence_options_and_labels():
    assert ac.SEQ_OPTIONS[0] == 16 and ac.SEQ_OPTIONS[-1] == 1_048_576
    assert len(ac.SEQ_OPTIONS) == 17
    assert [ac.seq_label(s) for s in (16, 512, 1024, 131_072)] == ["16", "512", "1K", "128K"]


def test_a_short_text_gets_its_missing_rows_on_arrival_and_a_long_one_keeps_the_button(tiny, monkeypatch):
    s = Session(tiny, "The cat sat on the mat.")
    s.generate(3, GREEDY)  # stepped elsewhere: capture off
    n = s.prompt_len + 3
    assert ac.fill_on_arrival(s) == n
    assert av.row_sources(s) == [av.PREFILL] * s.prompt_len + [av.DECODE] * 3
    assert ac.fill_on_arrival(s) == 0  # nothing missing: no pass
    longer = Session(tiny, "The cat sat on the mat.")
    longer.generate(3, GREEDY)
    monkeypatch.setattr(ac, "FILL_ON_ARRIVAL_TOKENS", n - 1)  # one token past the limit: left to the button
    assert ac.fill_on_arrival(longer) == 0 and av.MISSING in av.row_sources(longer)
    monkeypatch.setattr(ac, "FILL_ON_ARRIVAL_TOKENS", n)  # at the limit: filled
    assert ac.fill_on_arrival(longer) == n
