"""Where a query looked: attention weights recomputed from the hidden states and the model's own projections.

The fast attention kernels (SDPA) never materialise the weights, and switching the shared model to
eager attention would mutate it for every tab. So, on request, we redo the one small step the
kernel hides, with each layer's own modules: the pre-attention norm, the query and key projections
(separate ``q_proj``/``k_proj``, or fused: GPT-2's ``c_attn``, GPT-NeoX's per-head interleaved
``query_key_value``, Phi-3's ``qkv_proj``), per-head q/k norms (Qwen3, OLMo-2 …), the family's own
``apply_rotary_pos_emb`` when it rotates (full or partial), and the family's attention scale; then
softmax(q · Kᵀ · scale) over the keys the pass saw, written out by hand because that product is what
the page shows, with Gemma 2's tanh soft-cap of the scores, causal masking and, in sliding layers,
only the last ``window`` positions. Learned absolute positions (GPT-2, OPT) are already inside the
hidden states: nothing is rotated. A test checks every family against transformers' eager attention.

The keys come from two places: the positions fed in this pass are projected from its hidden states
(a sliding layer's cache may already have dropped some of them), and the earlier ones are the keys the
cache held *before* the pass (``past_keys``: a sliding layer drops the oldest key of its window as the
new one arrives, so after the pass it is gone).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import torch
from torch import nn
from transformers.models.llama.modeling_llama import repeat_kv

from autoreg_core.engine.model_spec import gqa_group, layer_windows


class AttentionUnsupported(RuntimeError):
    """The loaded architecture does not expose what the recomputation needs."""


# ---------------------------------------------------------------- finding the layers
_BODIES = ("model", "gpt_neox", "transformer")  # where families keep their decoder (OPT: model.decoder)
_NORMS = ("input_layernorm", "ln_1", "self_attn_layer_norm")  # the norm a layer applies before attention
_ATTENTIONS = ("self_attn", "attention", "attn")
_PROJECTIONS = ("q_proj", "qkv_proj", "query_key_value", "c_attn")


def _body(model) -> nn.Module:
    for name in _BODIES:
        inner = getattr(model, name, None)
        if inner is not None:
            return getattr(inner, "decoder", inner)
    raise AttentionUnsupported(f"Attention capture does not know where {type(model).__name__} keeps its layers.")


def _layers(model) -> nn.ModuleList:
    inner = _body(model)
    layers = getattr(inner, "layers", None)
    if layers is None:
        layers = getattr(inner, "h", None)
    if layers is None:
        raise AttentionUnsupported(f"Attention capture does not know where {type(model).__name__} keeps its layers.")
    return layers


def _first(module: nn.Module, names: tuple[str, ...]) -> tuple[str, nn.Module] | None:
    return next(((n, getattr(module, n)) for n in names if getattr(module, n, None) is not None), None)


@dataclass(frozen=True)
class _LayerParts:
    """What the recomputation reads from one decoder layer."""

    norm: nn.Module  # applied to the layer's input before attention (identity for OPT's post-norm variant)
    attn: nn.Module
    projection: str  # which of _PROJECTIONS the attention has


def _parts(model, layer: nn.Module) -> _LayerParts:
    attn = _first(layer, _ATTENTIONS)
    if attn is None:
        raise AttentionUnsupported(f"{type(model).__name__}: its layers have no attention module we know.")
    projection = _first(attn[1], _PROJECTIONS)
    if projection is None:
        raise AttentionUnsupported(f"{type(model).__name__}: its attention has no query projection we know.")
    norm = _first(layer, _NORMS)
    if norm is None:
        raise AttentionUnsupported(f"{type(model).__name__}: its layers have no pre-attention norm we know.")
    if norm[0] == "self_attn_layer_norm" and not getattr(layer, "do_layer_norm_before", True):
        norm = (norm[0], nn.Identity())  # OPT-350m normalises after attention: the layer input goes in as is
    return _LayerParts(norm=norm[1], attn=attn[1], projection=projection[0])


def supports_attention(model) -> bool:
    try:
        for layer in _layers(model):
            _parts(model, layer)
    except AttentionUnsupported:
        return False
    return True


def unsupported_reason(model) -> str:
    """Why attention cannot be recomputed for ``model`` ('' when it can): one sentence for the page."""
    try:
        for layer in _layers(model):
            _parts(model, layer)
    except AttentionUnsupported as exc:
        return str(exc)
    return ""


# ---------------------------------------------------------------- the shape of one family's attention
def _n_heads(model, attn: nn.Module) -> tuple[int, int, int]:
    """(query heads, K/V heads, head size) of one attention module."""
    cfg = model.config
    n_heads = int(getattr(cfg, "num_attention_heads", None) or cfg.n_head)
    n_kv = int(getattr(cfg, "num_key_value_heads", None) or n_heads)
    head_dim = int(getattr(attn, "head_dim", None) or getattr(attn, "head_size", None)
                   or cfg.hidden_size // n_heads)
    return n_heads, n_kv, head_dim


def _split_heads(x: torch.Tensor, n: int, d: int) -> torch.Tensor:
    """[batch, seq, n·d] → [batch, n, seq, d]."""
    return x.view(*x.shape[:-1], n, d).transpose(1, 2)


def _project(model, parts: _LayerParts, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries and keys of one layer before any rotation: [batch, heads, seq, d], [batch, kv_heads, seq, d]."""
    attn = parts.attn
    n_heads, n_kv, d = _n_heads(model, attn)
    if parts.projection == "q_proj":  # Llama, Mistral, Qwen, Gemma, OPT: one matrix each
        q, k = _split_heads(attn.q_proj(x), n_heads, d), _split_heads(attn.k_proj(x), n_kv, d)
    elif parts.projection == "qkv_proj":  # Phi-3: [all queries | all keys | all values]
        qkv = attn.qkv_proj(x)
        q = _split_heads(qkv[..., :n_heads * d], n_heads, d)
        k = _split_heads(qkv[..., n_heads * d:(n_heads + n_kv) * d], n_kv, d)
    elif parts.projection == "query_key_value":  # GPT-NeoX: per head [its query | its key | its value]
        qkv = _split_heads(attn.query_key_value(x), n_heads, 3 * d)
        q, k, _ = qkv.chunk(3, dim=-1)
    else:  # GPT-2's Conv1D c_attn: [all queries | all keys | all values]
        q, k, _ = attn.c_attn(x).split(n_heads * d, dim=-1)
        q, k = _split_heads(q, n_heads, d), _split_heads(k, n_kv, d)
    if getattr(attn, "q_norm", None) is not None:  # Qwen3-style per-head norms
        q, k = attn.q_norm(q), attn.k_norm(k)
    return q, k


def _rotate(model, parts: _LayerParts, q: torch.Tensor, k: torch.Tensor,
            x: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The family's own RoPE on q and k (partial when the family rotates part of each head); none for
    learned absolute positions, which were added to the embeddings."""
    rotary = getattr(_body(model), "rotary_emb", None)
    if rotary is None:
        return q, k
    apply = getattr(sys.modules[type(parts.attn).__module__], "apply_rotary_pos_emb", None)
    if apply is None:
        raise AttentionUnsupported(f"{type(model).__name__} rotates its keys with a function we cannot find.")
    cos, sin = rotary(x, position_ids=positions)
    return apply(q, k, cos, sin)[:2]


def _scale(model, parts: _LayerParts, head_dim: int) -> float:
    """The factor on q · k. OPT multiplies its queries by ``scaling`` inside ``q_proj``'s caller, so
    the product gets it here instead; Gemma 2 uses its ``query_pre_attn_scalar``."""
    return float(getattr(parts.attn, "scaling", head_dim ** -0.5))


def _softcap(model, parts: _LayerParts) -> float | None:
    cap = getattr(parts.attn, "attn_logit_softcapping", None)
    return float(cap) if cap else None


# ---------------------------------------------------------------- queries and keys
def projected(model, layer_idx: int, hidden: torch.Tensor,
              position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries and keys of one layer at ``position_ids``, as the layer makes them (rotated when the family
    rotates): [batch, heads, q_len, head_dim] and [batch, kv_heads, q_len, head_dim]."""
    parts = _parts(model, _layers(model)[layer_idx])
    x = parts.norm(hidden)
    q, k = _project(model, parts, x)
    return _rotate(model, parts, q, k, x, position_ids)


def key_states(model, layer_idx: int, hidden: torch.Tensor,
               position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Keys of one layer as projected, and after the family's rotation at ``position_ids`` (the same
    tensor twice for learned positions): [batch, kv_heads, q_len, head_dim] each."""
    parts = _parts(model, _layers(model)[layer_idx])
    x = parts.norm(hidden)
    q, k = _project(model, parts, x)
    return k, _rotate(model, parts, q, k, x, position_ids)[1]


def query_states(model, layer_idx: int, hidden: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
    """Queries of one layer after the family's rotation: [batch, heads, q_len, head_dim]."""
    return projected(model, layer_idx, hidden, position_ids)[0]


@dataclass(frozen=True)
class PastKeys:
    """The keys each layer's cache held before a pass, and the position of the first of them (a sliding
    layer keeps only its last window − 1 positions). Tensors are referenced, not copied: the cache
    replaces its tensors when it grows, so these stay as they were."""

    keys: tuple[torch.Tensor | None, ...]
    first: tuple[int, ...]


def past_keys(cache) -> PastKeys:
    """Take hold of the keys in ``cache`` before feeding more tokens into it."""
    keys, first = [], []
    for layer in getattr(cache, "layers", []) if cache is not None else []:
        held = layer.keys if getattr(layer, "is_initialized", False) else None
        seen = int(layer.get_seq_length()) if held is not None else 0
        keys.append(held)
        first.append(seen - (0 if held is None else int(held.shape[-2])))
    return PastKeys(tuple(keys), tuple(first))


def _earlier_keys(past: PastKeys | None, cache, layer_idx: int, q_start: int,
                  q_len: int) -> tuple[torch.Tensor | None, int]:
    """(keys before the pass, position of the first) for one layer. Without ``past``, from the cache
    after the pass, which works while it still holds every position (every layer of a model without a
    sliding window, or a pass from an empty cache)."""
    if past is not None and layer_idx < len(past.keys):
        return past.keys[layer_idx], past.first[layer_idx]
    if q_start == 0:
        return None, 0
    held = cache.layers[layer_idx].keys
    if held.shape[-2] != q_start + q_len:
        raise AttentionUnsupported("This layer's cache dropped keys outside its sliding window; "
                                   "take past_keys(cache) before the pass.")
    return held[:, :, :q_start], 0


def attention_weights(model, hidden_states: tuple[torch.Tensor, ...], cache, q_start: int,
                      past: PastKeys | None = None) -> torch.Tensor:
    """Attention probabilities of the queries at positions ``q_start..`` over every position up to theirs.

    ``hidden_states`` is the model's ``output_hidden_states`` tuple from the same forward pass (entry ``l``
    is the input of layer ``l``), ``cache`` the DynamicCache after that pass, ``past`` what
    ``past_keys(cache)`` returned before it (needed once a sliding layer has dropped keys).
    Returns float32 [layers, heads, q_len, q_start + q_len]; future keys, and in a sliding layer keys
    outside the window, get exactly 0.
    """
    layers = _layers(model)
    windows = layer_windows(model.config)
    q_len = hidden_states[0].shape[1]
    device = hidden_states[0].device
    positions = torch.arange(q_start, q_start + q_len, device=device).unsqueeze(0)
    rows = []
    for layer_idx in range(len(layers)):
        parts = _parts(model, layers[layer_idx])
        q, k_new = projected(model, layer_idx, hidden_states[layer_idx][:1], positions)  # [1, H, q, d]
        earlier, first = _earlier_keys(past, cache, layer_idx, q_start, q_len)
        keys = k_new if earlier is None or earlier.shape[-2] == 0 else torch.cat([earlier[:1].to(k_new), k_new], -2)
        keys = repeat_kv(keys, gqa_group(q.shape[1], keys.shape[1]))  # each KV head serves a group of queries
        scores = (q.float() @ keys.float().transpose(-1, -2)) * _scale(model, parts, q.shape[-1])  # [1, H, q, K]
        cap = _softcap(model, parts)
        if cap is not None:  # Gemma 2: cap · tanh(scores / cap), before the mask
            scores = torch.tanh(scores / cap) * cap
        k_pos = torch.arange(first, first + keys.shape[-2], device=device).view(1, -1)
        hidden = k_pos > positions.view(-1, 1)  # [q, K] causal mask
        if windows[layer_idx] is not None:
            hidden |= k_pos <= positions.view(-1, 1) - windows[layer_idx]
        probs = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)[0]  # [H, q, K]
        row = torch.zeros((probs.shape[0], q_len, q_start + q_len), dtype=torch.float32, device=device)
        row[:, :, first:] = probs
        rows.append(row)
    return torch.stack(rows)


def query_to_kv_head(n_heads: int, n_kv_heads: int) -> list[int]:
    """Which cached K/V head each query head reads under grouped-query attention."""
    group = gqa_group(n_heads, n_kv_heads)
    return [h // group for h in range(n_heads)]
