"""ModelSpec against numbers worked out by hand, and against a real cache's measured bytes."""
from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from autoreg_core.engine import decode
from autoreg_core.engine.kv_cache import measured_bytes
from autoreg_core.engine.model_spec import PRECISIONS, PRESETS, ModelSpec, dtype_bytes, dtype_name, precision_name

GiB, MiB = 2**30, 2**20
# SmolLM2-135M's published shape; its 134,515,008 parameters are the sum below with a tied embedding.
SMOLLM2 = dict(vocab_size=49_152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
               num_attention_heads=9, num_key_value_heads=3, head_dim=64, max_position_embeddings=8192,
               tie_word_embeddings=True)
# per layer: q 576·576 + k 576·192 + v 576·192 + o 576·576 + MLP 3·576·1536 + two norms 2·576 = 3,540,096
SMOLLM2_BODY = 30 * 3_540_096 + 576  # + the final norm = 106,203,456
SMOLLM2_PARAMS = SMOLLM2_BODY + 49_152 * 576  # + the tied embedding / LM head = 134,515,008


@pytest.fixture(scope="module")
def smollm2() -> ModelSpec:
    """The spec of a SmolLM2-shaped model built on the meta device (shapes only, no memory)."""
    with torch.device("meta"):
        model = LlamaForCausalLM(LlamaConfig(**SMOLLM2))
    return ModelSpec.from_model(model, "SmolLM2-shaped", torch.float32)


# ---------------------------------------------------------------- the tiny test model
def test_tiny_shape_by_hand(tiny):
    spec = tiny.spec
    V = tiny.spec.vocab
    # per layer: q 64·64 + k 64·32 + v 64·32 + o 64·64 + MLP 3·64·128 + two norms 2·64 = 36,992
    assert spec.body_params == 2 * 36_992 + 64 == 74_048
    assert spec.n_params == 74_048 + V * 64  # tied embedding / LM head counted once
    assert (spec.n_layers, spec.n_heads, spec.n_kv_heads, spec.head_dim, spec.hidden) == (2, 4, 2, 16, 64)
    assert (spec.weight_bytes_per_param, spec.cache_bytes_per_element, spec.max_positions) == (4, 4, 256)
    assert spec.cache_bytes_per_position == 2 * 2 * 2 * 16 * 4 == 512
    # the step producing position 10: 2·74,048 + 2·64·V + 4·2·4·16·10 (cached) or ·55 (naive: 10 positions)
    assert spec.flops_step(10, cached=True) == 148_096 + 128 * V + 5_120
    assert spec.flops_step(10, cached=False) == 10 * 148_096 + 128 * V + 28_160
    assert spec.step_bytes(10) == {"weights": (74_048 + 64 * V) * 4, "cache": 5_120,
                                     "total": (74_048 + 64 * V) * 4 + 5_120}


def test_cache_bytes_equal_a_measured_cache(tiny):
    """The formula against the bytes of the K and V tensors after a real prefill, then decode steps."""
    cache = decode.new_cache(tiny)
    decode.forward(tiny, list(range(1, 12)), cache)
    assert cache.get_seq_length() == 11
    assert measured_bytes(cache) == tiny.spec.cache_bytes(11) == 11 * 512
    for token in (5, 6, 7):
        decode.forward(tiny, [token], cache)
    assert measured_bytes(cache) == tiny.spec.cache_bytes(14) == 14 * 512
    assert tiny.spec.without_gqa().cache_bytes(14) == 2 * measured_bytes(cache)  # 4 heads where 2 are cached


# ---------------------------------------------------------------- SmolLM2's shape
def test_smollm2_by_hand(smollm2):
    assert (smollm2.n_layers, smollm2.n_heads, smollm2.n_kv_heads, smollm2.head_dim) == (30, 9, 3, 64)
    assert (smollm2.hidden, smollm2.vocab, smollm2.max_positions) == (576, 49_152, 8192)
    assert smollm2.body_params == SMOLLM2_BODY == 106_203_456
    assert smollm2.n_params == SMOLLM2_PARAMS == 134_515_008
    assert smollm2.gqa_group == 3
    assert smollm2.cache_bytes_per_position == 2 * 30 * 3 * 64 * 4 == 46_080
    assert smollm2.cache_bytes(1000) == 46_080_000
    assert smollm2.cache_bytes(1000, batch=4) == 184_320_000
    assert smollm2.without_gqa().cache_bytes_per_position == 2 * 30 * 9 * 64 * 4 == 138_240
    # one decode step at L = 1000: 2·106,203,456 + 2·576·49,152 + 4·30·9·64·1000
    assert smollm2.flops_step(1000, cached=True) == 212_406_912 + 56_623_104 + 69_120_000 == 338_150_016
    assert smollm2.dot_products_step(1000, cached=True) == 30 * 9 * 1000
    assert smollm2.dot_products_step(1000, cached=False) == 30 * 9 * 500_500
    assert smollm2.weight_bytes_per_step == 134_515_008 * 4
    assert smollm2.arithmetic_intensity(1000, cached=True) == pytest.approx(338_150_016 / (538_060_032 + 46_080_000))


def test_smollm2_count_table(smollm2):
    """1,000 tokens: the positions drop from 500,500 to 1,000, the attention per layer and head only to 500,500."""
    rows = {r["quantity"]: r for r in smollm2.count_table(1000)}
    assert list(rows) == ["token positions processed (projections, MLP)", "attention dot products per layer and head",
                          "attention dot products, all layers and heads", "FLOPs"]
    positions = rows["token positions processed (projections, MLP)"]
    assert (positions["naive"], positions["KV cache"], positions["naive / cached"]) == (500_500, 1000, 500.5)
    per_head = rows["attention dot products per layer and head"]
    assert (per_head["naive"], per_head["KV cache"]) == (1000 * 1001 * 1002 // 6, 500_500) == (167_167_000, 500_500)
    every = rows["attention dot products, all layers and heads"]
    assert (every["naive"], every["KV cache"]) == (270 * 167_167_000, 270 * 500_500)
    assert rows["FLOPs"]["KV cache"] == smollm2.flops_total(1000, True)


def test_embedded_model_matches_its_published_shape(embedded, smollm2):
    spec = embedded.spec
    assert (spec.n_params, spec.body_params, spec.n_layers, spec.n_heads, spec.n_kv_heads, spec.head_dim,
            spec.hidden, spec.vocab) == (smollm2.n_params, smollm2.body_params, 30, 9, 3, 64, 576, 49_152)


# ---------------------------------------------------------------- totals are sums of steps
@pytest.mark.parametrize("T", [1, 2, 7, 50])
def test_closed_forms_equal_sums_of_steps(tiny, smollm2, T):
    for spec in (tiny.spec, smollm2):
        for cached in (True, False):
            steps = range(1, T + 1)
            assert spec.flops_total(T, cached) == sum(spec.flops_step(L, cached) for L in steps)
            assert spec.dot_products_total(T, cached) == sum(spec.dot_products_step(L, cached) for L in steps)
            assert spec.positions_total(T, cached) == sum(1 if cached else L for L in steps)


def test_positions_500500_vs_1000():
    assert [ModelSpec.positions_total(T, False) for T in (1, 2, 1000)] == [1, 3, 500_500]
    assert [ModelSpec.positions_total(T, True) for T in (1, 2, 1000)] == [1, 2, 1000]


# ---------------------------------------------------------------- precisions
def test_weight_and_cache_precision_are_separate(smollm2):
    q = smollm2.with_precision(weight_bytes=0.5, cache_bytes=2)
    assert q.weight_bytes == 134_515_008 // 2 == 67_257_504
    assert q.cache_bytes_per_position == 2 * 30 * 3 * 64 * 2 == 23_040
    only_cache = smollm2.with_precision(cache_bytes=1)
    assert (only_cache.weight_bytes_per_param, only_cache.cache_bytes_per_element) == (4, 1)
    assert only_cache.weight_bytes == smollm2.weight_bytes == 538_060_032
    assert smollm2.with_precision() == smollm2


def test_dtypes_and_precision_names():
    assert [dtype_name(d) for d in (torch.float32, torch.bfloat16, torch.float16)] == ["float32", "bfloat16", "float16"]
    assert [dtype_bytes(d) for d in (torch.float32, torch.bfloat16, torch.int8)] == [4, 2, 1]
    assert [precision_name(b) for b in (4, 2, 1, 0.625, 3)] == [
        "float32", "float16 / bfloat16", "int8 / fp8", "4-bit, Q4_1 (5 bits with its scales)", "3 bytes"]
    assert sorted(PRECISIONS.values()) == [0.625, 1, 2, 4]


def test_bad_counts_are_refused(tiny):
    with pytest.raises(ValueError):
        tiny.spec.cache_bytes(-1)
    with pytest.raises(ValueError):
        tiny.spec.cache_bytes(2.5)


# ---------------------------------------------------------------- the calculator's presets
def test_presets_by_hand():
    gpt2 = PRESETS["GPT-2 Small"]
    assert gpt2.cache_bytes() == 2 * 12 * 12 * 64 * 1024 * 2 == 36 * MiB
    assert gpt2.without_gqa() == gpt2  # one K/V per head already
    assert gpt2.body_params == 124_439_808 - 50_257 * 768  # tied: one embedding matrix is not body
    seven = PRESETS["7B model, 128K context"]
    assert seven.cache_bytes() == 2 * 32 * 32 * 128 * 131_072 * 2 == 64 * GiB
    seventy = PRESETS["70B model with GQA, 4K tokens"]
    assert seventy.cache_bytes() == 2 * 80 * 8 * 128 * 4096 * 2 == 1.25 * GiB
    assert seventy.without_gqa().cache_bytes() == 8 * seventy.cache_bytes() == 10 * GiB
    assert seventy.body_params == 68_976_648_192 - 2 * 32_000 * 8192  # untied embedding and LM head
    assert all(p.seq_len > 0 and p.weight_bytes_per_param > 0 and p.n_kv_heads <= p.n_heads for p in PRESETS.values())


def test_attention_meets_the_layers_weight_flops_where_the_formulas_say():
    from autoreg_core.engine.model_spec import PRESETS

    for spec in PRESETS.values():
        L = spec.attention_equals_layers_at
        assert abs(L * spec.attention_flops_per_key - spec.flops_layers_per_token) <= spec.attention_flops_per_key / 2
        below = spec.flops_step(L - 10, True) - spec.flops_layers_per_token - spec.flops_lm_head
        assert below < spec.flops_layers_per_token  # the attention term, just before the crossover


def test_smollm2_attention_reaches_the_weights_near_three_thousand_positions(embedded):
    spec = embedded.spec
    assert 2_900 <= spec.attention_equals_layers_at <= 3_200
    share = spec.attention_flops_per_key * 2048 / spec.flops_step(2048, True)
    assert 0.3 < share < 0.4
