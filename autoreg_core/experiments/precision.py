"""Precision: fewer bytes per weight and per cached K/V value, and what that does to the output.

A decode step is limited by the bytes it reads, so storing the weights in 2 bytes (bfloat16) or 1
byte (int8) instead of 4 shrinks both the memory and the floor on the step time; the price is
rounding error in every weight. Four real paths are built here from the loaded model:

* ``float32``: the loaded model itself;
* ``bfloat16``: a copy cast to bfloat16 (torch);
* ``int8``: a copy whose ``nn.Linear`` layers are replaced by torch's dynamically quantized int8
  Linear (``torch.ao.quantization.quantize_dynamic``): int8 weights with one scale per output row,
  activations quantized on the fly, int8 matrix products;
* ``int8 weights only``: every ``nn.Linear`` stored as GGUF's Q8_0 stores it (int8 values in blocks of 32,
  one 16-bit scale per block: 8.5 bits per weight) while activations and products stay float32, the way
  llama.cpp and most servers run 8-bit weights;

plus a quantized KV cache (transformers' ``QuantizedCache`` with its ``fp8`` backend: one byte
per value and one scale per tensor, no extra package). A dial rounds the layers' weights to b
bits (2–8) on a float32 copy, per output row or in blocks of 32 as GGUF files store them, to find
where quality collapses. Quality is measured against float32 on a fixed text: KL divergence of the
next-token distributions, top-1 agreement and perplexity.
"""
from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as Int8Linear
from transformers import QuantizedCache
from transformers.pytorch_utils import Conv1D

from autoreg_core.engine import decode
from autoreg_core.engine import kv_cache as kv
from autoreg_core.engine.config import GREEDY
from autoreg_core.experiments.speculative_decoding import plain_decode

FP32, BF16, INT8 = "float32", "bfloat16", "int8"
INT8_WEIGHTS = "int8 weights only (Q8_0)"
FP8_CACHE = "float32 + fp8 KV cache"
VARIANTS = (FP32, BF16, INT8, INT8_WEIGHTS, FP8_CACHE)
MIN_BITS, MAX_BITS = 2, 8
GGUF_BLOCK = 32  # values per block in GGUF's Q4_1 / Q8_0 (one scale, and for Q4_1 one minimum, per block)


# ---------------------------------------------------------------- the real paths
class Q8Linear(nn.Module):
    """A Linear whose weight is stored as GGUF's Q8_0: int8 values in blocks of 32 consecutive weights of a
    row, each block with one float16 scale (its largest |value| ÷ 127). Inputs, outputs and products stay
    float32: the weight is unpacked at every call (this build has no fused kernel; llama.cpp unpacks
    inside its matrix product), so only the stored bytes shrink, not the arithmetic."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        weight = linear.weight.detach().float()
        if weight.shape[1] % GGUF_BLOCK:
            raise ValueError(f"A weight of shape {tuple(weight.shape)} does not split into blocks of {GGUF_BLOCK}.")
        blocks = weight.reshape(-1, GGUF_BLOCK)
        scales = (blocks.abs().amax(dim=1) / 127).clamp_min(torch.finfo(torch.float16).tiny).half()
        self.register_buffer("values", torch.round(blocks / scales.float().unsqueeze(1)).clamp(-127, 127)
                             .to(torch.int8))
        self.register_buffer("scales", scales)
        self.out_features, self.in_features = weight.shape
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone())

    def unpacked(self) -> torch.Tensor:
        """The float32 weight the stored int8 values and scales stand for."""
        return (self.values.float() * self.scales.float().unsqueeze(1)).reshape(self.out_features, self.in_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bias = None if self.bias is None else self.bias.to(x.dtype)
        return nn.functional.linear(x, self.unpacked().to(x.dtype), bias)


def q8_weights(model: nn.Module) -> nn.Module:
    """Every ``nn.Linear`` of ``model`` (in place) replaced by its ``Q8Linear``; embeddings and norms stay float32."""
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear):
                setattr(module, child_name, Q8Linear(child))
    return model


def as_linear(model: nn.Module) -> nn.Module:
    """Every ``Conv1D`` of ``model`` (GPT-2's projections: x·W + b with W stored [in, out]) replaced, in place, by
    the ``nn.Linear`` computing the same (its weight the transpose), so the int8 paths, which quantize
    ``nn.Linear``, reach GPT-2's layers too."""
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, Conv1D):
                n_in, n_out = child.weight.shape
                linear = nn.Linear(n_in, n_out, dtype=child.weight.dtype, device=child.weight.device)
                with torch.no_grad():
                    linear.weight.copy_(child.weight.T)
                    linear.bias.copy_(child.bias)
                setattr(module, child_name, linear)
    return model


def variant_bundle(bundle, variant: str):
    """The loaded model stored another way (a copy; float32 and the fp8-cache row use the model itself)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}")
    if variant in (FP32, FP8_CACHE):
        if bundle.dtype != torch.float32:
            raise ValueError("The precision comparison starts from a float32 model.")
        return bundle
    model = copy.deepcopy(bundle.model)
    if variant == BF16:
        model.to(torch.bfloat16)
        return dataclasses.replace(bundle, model=model, dtype=torch.bfloat16, name=f"{bundle.name} · {BF16}")
    as_linear(model)
    if variant == INT8_WEIGHTS:
        return dataclasses.replace(bundle, model=q8_weights(model), name=f"{bundle.name} · {INT8_WEIGHTS}")
    # one int8 scale per output row: a single scale per matrix loses too much (measured: top-1 agreement 36%)
    torch.ao.quantization.quantize_dynamic(model, {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig},
                                           inplace=True)
    return dataclasses.replace(bundle, model=model, name=f"{bundle.name} · {INT8}")


def variants_for(bundle) -> tuple[str, ...]:
    """The variants this model can be measured in: all, but the fp8 cache only without sliding-window layers
    (transformers' quantized cache accepts only full-attention layers)."""
    return tuple(v for v in VARIANTS if not (v == FP8_CACHE and bundle.spec.sliding_layers))


def new_cache(bundle, variant: str):
    """The KV cache a variant decodes with: fp8 for ``FP8_CACHE``, else a plain DynamicCache."""
    if variant == FP8_CACHE and bundle.spec.sliding_layers:
        raise ValueError(f"transformers' quantized KV cache supports only layers that attend to every position, and "
                         f"{bundle.name} has sliding-window layers, so its fp8 cache cannot be measured here.")
    return QuantizedCache(backend="fp8", config=bundle.config) if variant == FP8_CACHE else decode.new_cache(bundle)


def int8_layers(model) -> dict[str, torch.dtype]:
    """Every dynamically quantized Linear and the dtype its weight is stored in (torch.qint8)."""
    return {name: module.weight().dtype for name, module in model.named_modules() if isinstance(module, Int8Linear)}


# ---------------------------------------------------------------- memory, measured from the tensors
def _tensors(model):
    """Every stored weight: parameters, plus inside each int8 Linear its int8 weight, the per-row
    scales and zero points that go with it, and its bias, and inside each Q8 Linear its int8 values and
    float16 block scales."""
    yield from model.parameters()
    for module in model.modules():
        if isinstance(module, Q8Linear):
            yield from (module.values, module.scales)
        if isinstance(module, Int8Linear):
            weight = module.weight()
            yield weight
            if weight.qscheme() == torch.per_channel_affine:
                yield from (weight.q_per_channel_scales(), weight.q_per_channel_zero_points())
            if module.bias() is not None:
                yield module.bias()


def _nbytes(tensors) -> int:
    tensors = list(tensors)  # all alive at once: an unpacked int8 weight is a fresh tensor whose address is reused
    seen, total = set(), 0
    for t in tensors:
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), t.numel())
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


def weight_bytes(model) -> int:
    """Bytes of every stored weight (tied weights counted once)."""
    return _nbytes(_tensors(model))


def step_weight_bytes(model) -> int:
    """Weight bytes one decode step reads: all of them except the token embedding, of which a step
    reads one row, unless the embedding is also the LM head (tied weights are read in full)."""
    embedding = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    tied = isinstance(head, nn.Linear) and head.weight is embedding
    return weight_bytes(model) - (0 if tied else _nbytes([embedding]))


def cache_bytes(cache) -> int:
    """Bytes of a KV cache's stored tensors: K and V, or for a quantized cache its quantized states,
    scales and any full-precision residual."""
    if not isinstance(cache, QuantizedCache):
        return kv.measured_bytes(cache)
    stored = []
    for layer in cache.layers:
        for state in (layer._quantized_keys, layer._quantized_values):
            stored += [t for t in (state or ()) if isinstance(t, torch.Tensor)]
        stored += [t for t in (layer.keys, layer.values) if isinstance(t, torch.Tensor)]
    return _nbytes(stored)


# ---------------------------------------------------------------- rounding weights to b bits
def check_bits(bits: int) -> int:
    if int(bits) != bits or not MIN_BITS <= bits <= MAX_BITS:
        raise ValueError(f"Bits per weight must be a whole number from {MIN_BITS} to {MAX_BITS}; got {bits!r}.")
    return int(bits)


def _groups(weight: torch.Tensor, block: int | None) -> torch.Tensor:
    if block is None:
        return weight.reshape(weight.shape[0], -1)
    if weight.numel() % block:
        raise ValueError(f"A weight of shape {tuple(weight.shape)} does not split into blocks of {block}.")
    return weight.reshape(-1, block)


def step_sizes(weight: torch.Tensor, bits: int, block: int | None = None) -> torch.Tensor:
    """The quantisation step of every group: (max − min) / (2^b − 1), one per row or block."""
    groups = _groups(weight.float(), block)
    levels = 2 ** check_bits(bits) - 1
    return ((groups.amax(dim=1) - groups.amin(dim=1)) / levels).clamp_min(torch.finfo(torch.float32).tiny)


def round_weights(weight: torch.Tensor, bits: int, block: int | None = None) -> torch.Tensor:
    """Each value moved to the nearest of 2^b evenly spaced levels between its group's min and max
    (per output row, or per ``block`` consecutive values as GGUF's Q4_1 does)."""
    groups = _groups(weight.float(), block)
    step = step_sizes(weight, bits, block).unsqueeze(1)
    low = groups.amin(dim=1, keepdim=True)
    levels = torch.round((groups - low) / step).clamp(0, 2 ** bits - 1)
    return (levels * step + low).reshape(weight.shape).to(weight.dtype)


def decoder_layers(model, n_layers: int) -> nn.ModuleList:
    """The model's list of decoder layers, whatever the family calls it (Llama's ``model.layers``, GPT-2's
    ``transformer.h``, OPT's ``model.decoder.layers``): its one module list of ``n_layers`` entries."""
    for module in model.modules():
        if isinstance(module, nn.ModuleList) and len(module) == n_layers:
            return module
    raise ValueError(f"{type(model).__name__}: no list of its {n_layers} decoder layers was found.")


def rounded_bundle(bundle, bits: int, block: int | None = None):
    """A float32 copy whose decoder-layer Linear weights are rounded to ``bits`` (embedding and LM head kept)."""
    check_bits(bits)
    model = copy.deepcopy(bundle.model)
    layers = decoder_layers(model, bundle.spec.n_layers)
    with torch.no_grad():
        for module in layers.modules():
            if isinstance(module, nn.Linear):
                module.weight.copy_(round_weights(module.weight, bits, block))
            elif isinstance(module, Conv1D):  # GPT-2's projections store [in, out]: rows of the transpose are outputs
                module.weight.copy_(round_weights(module.weight.T, bits, block).T)
    label = f"{bits}-bit, " + ("per row" if block is None else f"blocks of {block}")
    return dataclasses.replace(bundle, model=model, name=f"{bundle.name} · {label}")


# ---------------------------------------------------------------- quality against float32, speed
@dataclass(frozen=True)
class Quality:
    """How far a variant's next-token distributions are from float32's over a fixed text."""

    kl_bits: float  # mean KL(p_float32 ‖ p_variant) per position, in bits
    top1: float  # share of positions whose most likely next token is float32's
    perplexity: float  # of the text's own next tokens under the variant
    positions: int


def text_logits(bundle, ids: list[int], variant: str = FP32, prefix: int = 16) -> torch.Tensor:
    """Next-token logits at every position from ``prefix`` − 1 to the second-to-last (teacher forcing).

    Weight variants read the text in one pass. The KV-cache variant prefills ``prefix`` tokens and
    then feeds the rest one at a time, so every later position attends to the quantized cache.
    """
    if not 1 <= prefix < len(ids):
        raise ValueError(f"The text needs more than {prefix} tokens; it has {len(ids)}.")
    if variant != FP8_CACHE:
        return decode.forward(bundle, [ids], None, all_positions=True).logits[0, prefix - 1:-1]
    cache = new_cache(bundle, variant)
    rows = [decode.forward(bundle, [ids[:prefix]], cache).logits[0]]
    rows += [decode.forward(bundle, [[token]], cache).logits[0] for token in ids[prefix:-1]]
    return torch.stack(rows)


def quality(reference: torch.Tensor, logits: torch.Tensor, targets: list[int]) -> Quality:
    """KL, top-1 agreement and perplexity of ``logits`` against ``reference`` ([positions, vocab])."""
    ref_logp = torch.log_softmax(reference.double(), dim=-1)
    logp = torch.log_softmax(logits.double(), dim=-1)
    kl = float((ref_logp.exp() * (ref_logp - logp)).sum(dim=-1).mean()) / math.log(2)
    top1 = float((reference.argmax(dim=-1) == logits.argmax(dim=-1)).double().mean())
    nll = -float(logp[torch.arange(len(targets)), torch.as_tensor(targets)].mean())
    return Quality(max(kl, 0.0), top1, math.exp(nll), len(targets))


@dataclass(frozen=True)
class PrecisionRow:
    """One way of storing the model, measured."""

    variant: str
    weight_bytes: int  # every stored weight
    step_weight_bytes: int  # what one decode step reads of them
    cache_bytes: int  # the KV cache after the prompt and the timed steps
    cache_positions: int
    step_ms: float  # the fastest decode step (other work on the machine only ever adds time)
    tokens: list[int]  # greedy continuation of the prompt
    quality: Quality

    @property
    def step_bytes(self) -> int:
        """Bytes read by the last decode step: the weights once and the whole KV cache."""
        return self.step_weight_bytes + self.cache_bytes


def measure(bundle, variant: str, prompt_ids: list[int], text_ids: list[int], reference: torch.Tensor,
            steps: int = 16, prefix: int = 16) -> PrecisionRow:
    """Build ``variant`` from the float32 ``bundle``; measure its memory, decode step and quality."""
    model = variant_bundle(bundle, variant)
    cache = new_cache(model, variant)
    run = plain_decode(model, prompt_ids, steps, GREEDY, cache=cache, stop_at_eos=False)
    logits = text_logits(model, text_ids, variant, prefix)
    return PrecisionRow(variant, weight_bytes(model.model), step_weight_bytes(model.model), cache_bytes(cache),
                        cache.get_seq_length(), min(run.step_ms), run.tokens,
                        quality(reference, logits, text_ids[prefix:]))


def dial(bundle, bits: int, block: int | None, text_ids: list[int], reference: torch.Tensor,
         prefix: int = 16) -> Quality:
    """Quality of the model with its layers' weights rounded to ``bits`` (a temporary copy)."""
    model = rounded_bundle(bundle, bits, block)
    return quality(reference, text_logits(model, text_ids, FP32, prefix), text_ids[prefix:])
