"""Where a query looked: attention weights recomputed from the hidden states and the KV cache.

The fast attention kernels (SDPA) never materialise the weights, and switching the shared model to
eager attention would mutate it for every tab. So, on request, we redo the one small step the
kernel hides: q = RoPE(W_q · RMSNorm(h)) (RoPE and the GQA key repeat are transformers' own
functions), then softmax(q · Kᵀ / √d) against the keys already sitting in the cache, written out by hand
because that product is what the page shows. This is exactly the formula the app teaches, and a test checks
it against transformers' eager attention.

Supported: Llama-style decoders (Llama, SmolLM, Mistral, Qwen2 ...): layers with
``input_layernorm`` and ``self_attn.q_proj`` and a model-level ``rotary_emb``.
"""
from __future__ import annotations

import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv

from autoreg_core.engine.model_spec import gqa_group


class AttentionUnsupported(RuntimeError):
    """The loaded architecture does not expose what the recomputation needs."""


def _decoder(model):
    inner = getattr(model, "model", None)
    if inner is None or not hasattr(inner, "layers") or not hasattr(inner, "rotary_emb"):
        raise AttentionUnsupported(
            f"Attention capture supports Llama-style models; {type(model).__name__} is not one.")
    layer = inner.layers[0]
    if not hasattr(layer, "input_layernorm") or not hasattr(getattr(layer, "self_attn", None), "q_proj"):
        raise AttentionUnsupported(f"{type(model).__name__}: layers lack input_layernorm/q_proj.")
    return inner


def supports_attention(model) -> bool:
    try:
        _decoder(model)
    except AttentionUnsupported:
        return False
    return True


def query_states(model, layer_idx: int, hidden: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
    """Queries of one layer after RoPE: [batch, heads, q_len, head_dim]."""
    inner = _decoder(model)
    layer = inner.layers[layer_idx]
    attn = layer.self_attn
    x = layer.input_layernorm(hidden)
    head_dim = attn.head_dim
    q = attn.q_proj(x).view(*x.shape[:-1], -1, head_dim).transpose(1, 2)
    if hasattr(attn, "q_norm"):  # Qwen3-style per-head norm
        q = attn.q_norm(q)
    cos, sin = inner.rotary_emb(x, position_ids=position_ids)
    return apply_rotary_pos_emb(q, q, cos, sin)[0]  # transformers' own RoPE (only the query is needed)


def attention_weights(model, hidden_states: tuple[torch.Tensor, ...], cache, q_start: int) -> torch.Tensor:
    """Attention probabilities of the queries at positions ``q_start..`` over every cached key.

    ``hidden_states`` is the model's ``output_hidden_states`` tuple from the same forward pass
    (entry ``l`` is the input of layer ``l``), ``cache`` the DynamicCache after that pass.
    Returns float32 [layers, heads, q_len, cache_len]; future keys get exactly 0.
    """
    inner = _decoder(model)
    n_layers = len(inner.layers)
    q_len = hidden_states[0].shape[1]
    positions = torch.arange(q_start, q_start + q_len, device=hidden_states[0].device).unsqueeze(0)
    rows = []
    for layer_idx in range(n_layers):
        q = query_states(model, layer_idx, hidden_states[layer_idx][:1], positions)  # [1, H, q, d]
        keys = cache.layers[layer_idx].keys[:1]  # [1, KV, T, d]
        keys = repeat_kv(keys, gqa_group(q.shape[1], keys.shape[1]))  # each KV head serves a group of queries
        scaling = getattr(inner.layers[layer_idx].self_attn, "scaling", q.shape[-1] ** -0.5)
        scores = (q.float() @ keys.float().transpose(-1, -2)) * scaling  # [1, H, q, T]
        k_pos = torch.arange(keys.shape[-2], device=scores.device)
        future = k_pos.view(1, -1) > positions.view(-1, 1)  # [q, T] causal mask
        scores = scores.masked_fill(future, float("-inf"))
        rows.append(torch.softmax(scores, dim=-1)[0])
    return torch.stack(rows)


def query_to_kv_head(n_heads: int, n_kv_heads: int) -> list[int]:
    """Which cached K/V head each query head reads under grouped-query attention."""
    group = gqa_group(n_heads, n_kv_heads)
    return [h // group for h in range(n_heads)]
