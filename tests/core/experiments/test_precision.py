"""Precision: measured bytes equal the tensors', the int8 path really holds int8 weights, the fp8
cache one byte per value, rounding stays within half a step, quality is measured against float32."""
from __future__ import annotations

import pytest
import torch
from tiny import varied_bundle
from torch import nn

from autoreg_core.engine import decode
from autoreg_core.engine.kv_cache import measured_bytes
from autoreg_core.experiments import precision

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def int8(tiny):
    return precision.variant_bundle(tiny, precision.INT8)


def _linears(model) -> dict[str, nn.Linear]:
    return {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)}


# ---------------------------------------------------------------- memory
def test_float32_and_bfloat16_bytes_are_the_specs(tiny):
    assert precision.variant_bundle(tiny, precision.FP32) is tiny
    assert precision.weight_bytes(tiny.model) == tiny.spec.weight_bytes
    assert precision.step_weight_bytes(tiny.model) == tiny.spec.weight_bytes_per_step
    half = precision.variant_bundle(tiny, precision.BF16)
    assert half.model is not tiny.model and next(tiny.model.parameters()).dtype == torch.float32
    assert {p.dtype for p in half.model.parameters()} == {torch.bfloat16}
    assert precision.weight_bytes(half.model) == tiny.spec.with_precision(weight_bytes=2).weight_bytes
    assert precision.step_weight_bytes(half.model) == tiny.spec.with_precision(weight_bytes=2).weight_bytes_per_step


def test_int8_path_really_holds_int8_weights(tiny, int8):
    originals = _linears(tiny.model)
    assert set(precision.int8_layers(int8.model)) == set(originals)
    assert set(precision.int8_layers(int8.model).values()) == {torch.qint8}
    assert _linears(int8.model) == {}  # every Linear was replaced
    linear_params = sum(m.weight.numel() for m in originals.values())
    rows = sum(m.weight.shape[0] for m in originals.values())  # one float64 scale and int64 zero point each
    others = sum(p.numel() for p in int8.model.parameters())  # embedding and norms stay float32
    assert precision.weight_bytes(int8.model) == linear_params * 1 + rows * 16 + others * 4
    embedding = tiny.model.get_input_embeddings().weight.numel()
    assert precision.step_weight_bytes(int8.model) == linear_params + rows * 16 + (others - embedding) * 4
    weight = int8.model.model.layers[0].mlp.up_proj.weight()
    assert weight.qscheme() == torch.per_channel_affine and weight.int_repr().dtype == torch.int8
    assert precision.int8_layers(tiny.model) == {}  # the loaded model is untouched


def test_int8_and_bfloat16_stay_close_to_float32(tiny, int8):
    ids = tiny.tokenizer("Once upon a time there was a small village by the sea.")["input_ids"]
    reference = precision.text_logits(tiny, ids, prefix=4)
    for bundle in (int8, precision.variant_bundle(tiny, precision.BF16)):
        q = precision.quality(reference, precision.text_logits(bundle, ids, prefix=4), ids[4:])
        assert q.positions == len(ids) - 4
        assert 0 < q.kl_bits < 0.01


def test_kv_cache_bytes_are_measured_from_the_tensors(tiny):
    ids = list(range(3, 40))
    plain = precision.new_cache(tiny, precision.FP32)
    decode.forward(tiny, [ids], plain)
    assert precision.cache_bytes(plain) == measured_bytes(plain) == tiny.spec.cache_bytes(len(ids))
    fp8 = precision.new_cache(tiny, precision.FP8_CACHE)
    decode.forward(tiny, [ids], fp8)
    decode.forward(tiny, [[5]], fp8)
    assert {layer._quantized_keys[0].dtype for layer in fp8.layers} == {torch.float8_e4m3fn}
    scales = 2 * tiny.spec.n_layers * 4  # one float32 scale for K and one for V in every layer
    one_byte = tiny.spec.with_precision(cache_bytes=1)
    assert precision.cache_bytes(fp8) == one_byte.cache_bytes(len(ids) + 1) + scales
    assert measured_bytes(fp8) == 0  # the generic measure sees no plain K/V tensors in a quantized cache


def test_measure_gives_a_row_per_variant(tiny):
    prompt = list(range(3, 19))
    text = tiny.tokenizer("The cat sat on the mat. The dog sat on the log. A bird flew over the house.")["input_ids"]
    reference = precision.text_logits(tiny, text, prefix=8)
    rows = {v: precision.measure(tiny, v, prompt, text, reference, steps=4, prefix=8) for v in precision.VARIANTS}
    base = rows[precision.FP32]
    assert base.quality.kl_bits == 0.0 and base.quality.top1 == 1.0
    for row in rows.values():
        assert len(row.tokens) == 4 and row.cache_positions == len(prompt) + 3
        assert row.quality.positions == len(text) - 8
        assert row.step_bytes == row.step_weight_bytes + row.cache_bytes
    assert rows[precision.FP8_CACHE].cache_bytes < base.cache_bytes / 3
    assert rows[precision.BF16].cache_bytes == base.cache_bytes // 2


# ---------------------------------------------------------------- rounding to b bits
@pytest.mark.parametrize("block", [None, 32])
def test_eight_bit_rounding_moves_each_weight_at_most_half_a_step(tiny, block):
    weight = tiny.model.model.layers[0].mlp.up_proj.weight
    rounded = precision.round_weights(weight, 8, block)
    assert rounded.shape == weight.shape and rounded.dtype == weight.dtype
    steps = precision.step_sizes(weight, 8, block)
    moved = (rounded - weight).abs().reshape(steps.shape[0], -1).amax(dim=1)
    assert bool((moved <= steps / 2 + 1e-7).all())
    assert not torch.equal(rounded, weight)
    levels = ((rounded.reshape(steps.shape[0], -1) - rounded.reshape(steps.shape[0], -1).amin(1, keepdim=True))
              / steps.unsqueeze(1))
    assert torch.allclose(levels, levels.round(), atol=1e-3)  # every value sits on one of the 256 levels


def test_rounding_already_rounded_weights_changes_nothing(tiny):
    weight = tiny.model.model.layers[1].self_attn.q_proj.weight
    four = precision.round_weights(weight, 4, 32)
    assert torch.allclose(precision.round_weights(four, 4, 32), four, atol=1e-6)
    assert len(torch.unique(four.reshape(-1, 32)[0])) <= 16


@pytest.mark.parametrize("bits", [1, 9, 4.5])
def test_bits_are_bounded(bits):
    with pytest.raises(ValueError, match="from 2 to 8"):
        precision.round_weights(torch.ones(4, 32), bits)


def test_rounded_model_is_a_copy_with_rounded_layers(tiny):
    rounded = precision.rounded_bundle(tiny, 3, 32)
    before = tiny.model.model.layers[0].mlp.down_proj.weight
    after = rounded.model.model.layers[0].mlp.down_proj.weight
    assert torch.equal(after, precision.round_weights(before, 3, 32)) and not torch.equal(after, before)
    assert torch.equal(rounded.model.lm_head.weight, tiny.model.lm_head.weight)
    with pytest.raises(ValueError, match="blocks of 7"):
        precision.rounded_bundle(tiny, 4, 7)


def test_dial_measures_quality_against_float32():
    bundle = varied_bundle()
    text = bundle.tokenizer("Once upon a time there was a small village by the sea, and everyone knew the baker.")[
        "input_ids"]
    reference = precision.text_logits(bundle, text, prefix=4)
    eight, two = (precision.dial(bundle, bits, None, text, reference, prefix=4) for bits in (8, 2))
    assert eight.positions == two.positions == len(text) - 4
    assert eight.kl_bits < two.kl_bits and eight.top1 >= two.top1
    same = precision.quality(reference, reference, text[4:])
    assert same.kl_bits == 0.0 and same.top1 == 1.0


def test_quality_counts_kl_top1_and_perplexity():
    reference = torch.log(torch.tensor([[0.5, 0.5], [0.9, 0.1]]))
    logits = torch.log(torch.tensor([[0.5, 0.5], [0.1, 0.9]]))
    q = precision.quality(reference, logits, [0, 1])
    expected_kl = (0.9 * torch.log2(torch.tensor(9.0)) + 0.1 * torch.log2(torch.tensor(1 / 9))) / 2
    assert q.kl_bits == pytest.approx(float(expected_kl))
    assert q.top1 == 0.5
    assert q.perplexity == pytest.approx((1 / (0.5 * 0.9)) ** 0.5)


def test_embedded_weights_were_4_bit_in_blocks_of_32(embedded):
    """The GGUF file stored every layer weight as Q4_1: rounding to 4 bits in blocks of 32 gives them back."""
    layer = embedded.model.model.layers[3]
    for weight in (layer.self_attn.q_proj.weight, layer.mlp.down_proj.weight):
        assert torch.allclose(precision.round_weights(weight, 4, 32), weight, atol=1e-6)
        assert not torch.allclose(precision.round_weights(weight, 4), weight, atol=1e-3)  # per row: not at all


# ---------------------------------------------------------------- weight-only int8 (Q8_0)
@pytest.fixture(scope="module")
def q8(tiny):
    return precision.variant_bundle(tiny, precision.INT8_WEIGHTS)


def test_weight_only_int8_stores_q8_0_blocks_and_its_bytes_are_8_5_bits_per_weight(tiny, q8):
    originals = _linears(tiny.model)
    q8_layers = {name: m for name, m in q8.model.named_modules() if isinstance(m, precision.Q8Linear)}
    assert set(q8_layers) == set(originals) and _linears(q8.model) == {}
    assert _linears(tiny.model) == originals  # the loaded model is untouched
    layer = q8_layers["model.layers.0.mlp.up_proj"]
    assert layer.values.dtype == torch.int8 and layer.scales.dtype == torch.float16
    up = originals["model.layers.0.mlp.up_proj"].weight
    assert layer.scales.numel() * precision.GGUF_BLOCK == layer.values.numel() == up.numel()
    linear_params = sum(m.weight.numel() for m in originals.values())
    others = sum(p.numel() for p in q8.model.parameters())  # embedding and norms stay float32
    scales = linear_params // precision.GGUF_BLOCK
    assert precision.weight_bytes(q8.model) == linear_params * 1 + scales * 2 + others * 4
    embedding = tiny.model.get_input_embeddings().weight.numel()
    assert precision.step_weight_bytes(q8.model) == (linear_params + linear_params // precision.GGUF_BLOCK * 2
                                                     + (others - embedding) * 4)


def test_weight_only_int8_moves_each_weight_at_most_half_a_step_and_activations_stay_float(tiny, q8):
    for name, original in _linears(tiny.model).items():
        layer = q8.model.get_submodule(name)
        step = layer.scales.float().repeat_interleave(precision.GGUF_BLOCK).reshape(original.weight.shape)
        error = (layer.unpacked() - original.weight.detach()).abs()
        assert bool((error <= step / 2 + 1e-6).all()), name
        x = torch.randn(3, original.in_features)
        assert torch.allclose(layer(x), torch.nn.functional.linear(x, layer.unpacked()), atol=1e-5)
        assert layer(x).dtype == torch.float32


def test_weight_only_int8_stays_closer_to_float32_than_dynamic_int8(tiny, int8, q8):
    ids = tiny.tokenizer("Once upon a time there was a small village by the sea.")["input_ids"]
    reference = precision.text_logits(tiny, ids, prefix=4)
    weights_only = precision.quality(reference, precision.text_logits(q8, ids, prefix=4), ids[4:])
    dynamic = precision.quality(reference, precision.text_logits(int8, ids, prefix=4), ids[4:])
    assert 0 < weights_only.kl_bits < dynamic.kl_bits


@pytest.mark.integration
def test_on_the_embedded_model_weight_only_int8_keeps_the_answers_dynamic_int8_loses(embedded):
    ids = embedded.tokenizer("The river runs past the old mill, under the stone bridge and on towards the sea, "
                             "where the fishing boats wait for the tide.")["input_ids"]
    reference = precision.text_logits(embedded, ids, prefix=8)
    q8 = precision.quality(reference, precision.text_logits(
        precision.variant_bundle(embedded, precision.INT8_WEIGHTS), ids, prefix=8), ids[8:])
    dynamic = precision.quality(reference, precision.text_logits(
        precision.variant_bundle(embedded, precision.INT8), ids, prefix=8), ids[8:])
    assert q8.top1 > dynamic.top1 and q8.top1 >= 0.9 and q8.kl_bits < dynamic.kl_bits
