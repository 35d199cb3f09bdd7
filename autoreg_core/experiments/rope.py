"""Positions: rotary embeddings (RoPE), why a cached key stays valid, left padding, and an off-by-one.

A Llama-style model has no position vector added to its input. Instead each query and key is
**rotated**: its head dimensions are taken in pairs (i, i + d/2), and pair i is turned by the angle
θ_i = pos · base^(−2i/d), where ``base`` is the config's ``rope_theta`` and d the head dimension. The
dot product of a query rotated by m and a key rotated by n then depends on m − n only.

Consequences this module measures on the loaded model:

- a decode step at cache length L feeds its token at position L (positions count from 0);
- the cache stores keys *already rotated* by their own position, so a key never needs recomputing
  as the text grows: recomputed from the layer's input at its position, it equals the cache entry;
- rows left-padded into one batch need their own position ids (a row's real tokens count from 0);
  the pad columns would otherwise push every position of the shorter row along;
- a new token fed one position off changes the logits; shifting the *whole* text by one changes
  almost nothing (only m − n matters).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from autoreg_core.engine import decode
from autoreg_core.engine.attention import key_states
from autoreg_core.engine.model_spec import LEARNED, ROTARY
from autoreg_core.engine.padding import left_padded_cache


@dataclass(frozen=True)
class Rope:
    """The rotation's settings, read from the model config."""

    base: float  # rope_theta
    head_dim: int  # the dimensions rotated: the whole head, or its first part (``partial_rotary_factor``)
    rope_type: str  # "default" = the plain formula; other types rescale the frequencies

    @property
    def pairs(self) -> int:
        return self.head_dim // 2


def rope_of(config) -> Rope:
    """``rope_theta`` (in ``rope_parameters`` on transformers 5, a plain attribute before) and the head dimension."""
    params = dict(getattr(config, "rope_parameters", None) or {})
    base = params.get("rope_theta", getattr(config, "rope_theta", 10000.0))
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    rotated = int(head_dim * float(params.get("partial_rotary_factor", 1.0)))  # GPT-NeoX rotates part of a head
    return Rope(float(base), rotated, str(params.get("rope_type", "default")))


def frequencies(rope: Rope) -> torch.Tensor:
    """base^(−2i/d) for every pair i, in float64."""
    i = torch.arange(rope.pairs, dtype=torch.float64)
    return rope.base ** (-2.0 * i / rope.head_dim)


def angles(rope: Rope, position: int) -> torch.Tensor:
    """θ_i = position · base^(−2i/d), radians, one per dimension pair."""
    return float(position) * frequencies(rope)


def rotate(x: torch.Tensor, positions, rope: Rope) -> torch.Tensor:
    """Turn each pair (i, i + d/2) of ``x`` [..., seq, d] by θ_i at the row's position (``positions``: [seq])."""
    pos = torch.as_tensor(positions, dtype=torch.float64).view(-1, 1)
    theta = pos * frequencies(rope).view(1, -1)  # [seq, d/2]
    cos, sin = torch.cos(theta).to(x.dtype), torch.sin(theta).to(x.dtype)
    first, second = x[..., :rope.pairs], x[..., rope.pairs:]
    return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)


def step_positions(cache_len: int, n_new: int) -> list[int]:
    """The position ids of a pass feeding ``n_new`` tokens on a cache of ``cache_len``: L, L + 1, …"""
    return list(range(int(cache_len), int(cache_len) + int(n_new)))


# ---------------------------------------------------------------- a cached key, recomputed
@dataclass(frozen=True)
class KeyCheck:
    """One cached key (a layer, a KV head, a position) beside the same key recomputed from the layer's input."""

    layer: int
    position: int
    cached: list[float]  # the cache entry, [head_dim]
    recomputed: list[float]  # k_proj(norm(h)) rotated by its own position
    unrotated: list[float]  # k_proj(norm(h)) before the rotation
    gap: float  # max |cached − recomputed|
    gap_unrotated: float  # max |cached − unrotated|: what the rotation changed
    gap_other_position: float  # max |cached − the key rotated by the last position instead|


def check_cached_key(bundle, ids: list[int], position: int, layer: int = 0, kv_head: int = 0) -> KeyCheck:
    """Fill a cache with ``ids`` and recompute one of its keys from the layer's input hidden state."""
    ids = [int(i) for i in ids]
    if not 0 <= position < len(ids):
        raise ValueError(f"Position {position} is outside the text (0–{len(ids) - 1}).")
    if bundle.spec.positions == LEARNED:
        raise ValueError(f"{bundle.name} adds a learned position vector to each token's embedding instead of "
                         "rotating its keys, so there is no rotation to check.")
    if bundle.spec.positions != ROTARY:
        raise ValueError(f"{bundle.name} has no rotary embeddings, so there is no rotation to check.")
    model = bundle.model
    cache = DynamicCache()  # without the config: a sliding layer keeps every position too, so any can be read
    fwd = decode.forward(bundle, ids, cache, hidden_states=True)
    held, first = cache.layers[layer], 0
    other = len(ids) - 1 if position != len(ids) - 1 else 0
    h = fwd.hidden_states[layer][:, position:position + 1]
    with torch.inference_mode():  # the family's own projection (fused or not)
        k, turned = (t[0, kv_head] for t in key_states(model, layer, h, torch.tensor([[position]])))  # [1, d]
        elsewhere = key_states(model, layer, h, torch.tensor([[other]]))[1][0, kv_head]
        if bundle.spec.rotary_fraction == 1.0:  # the whole head turns: the rotation written out here
            rope = rope_of(bundle.config)
            turned, elsewhere = rotate(k, [position], rope), rotate(k, [other], rope)
        cached = held.keys[0, kv_head, position - first].float()
    turned, elsewhere = turned[0], elsewhere[0]  # else the family's own rotation of part of each head
    k = k[0].float()
    return KeyCheck(layer, position, cached.tolist(), turned.float().tolist(), k.tolist(),
                    float((cached - turned.float()).abs().max()), float((cached - k).abs().max()),
                    float((cached - elsewhere.float()).abs().max()))


# ---------------------------------------------------------------- off by one
@dataclass(frozen=True)
class Shifted:
    """The next-token logits with the right positions, and with positions moved by ``shift``."""

    position: int  # the right position of the last token
    shift: int
    top_right: list[int]  # the model's top tokens, right positions (most likely first)
    top_last_off: list[int]  # ... when only the last token is fed at position + shift
    top_all_off: list[int]  # ... when every position is moved by shift (the whole text starts at shift)
    max_delta_last: float  # max |Δ logit| over the vocabulary, last token off
    kl_last_bits: float  # KL(right ‖ last off), bits
    max_delta_all: float
    kl_all_bits: float

    @property
    def top_changed_last(self) -> bool:
        return self.top_right[0] != self.top_last_off[0]

    @property
    def top_changed_all(self) -> bool:
        return self.top_right[0] != self.top_all_off[0]


def kl_bits(p_logits: torch.Tensor, q_logits: torch.Tensor) -> float:
    """KL(softmax p ‖ softmax q) in bits, in float64."""
    lp, lq = torch.log_softmax(p_logits.double(), -1), torch.log_softmax(q_logits.double(), -1)
    return float((lp.exp() * (lp - lq)).sum() / torch.log(torch.tensor(2.0, dtype=torch.float64)))


def _last_logits(bundle, ids: list[int], start: int, last_at: int) -> torch.Tensor:
    """Prefill ``ids[:-1]`` at positions start …, then feed the last token at ``last_at``: its logits."""
    cache = decode.new_cache(bundle)
    head = ids[:-1]
    decode.forward(bundle, head, cache, position_ids=[list(range(start, start + len(head)))])
    return decode.forward(bundle, [ids[-1:]], cache, position_ids=[[last_at]]).logits[0]


def shifted_step(bundle, ids: list[int], shift: int = 1, top: int = 5) -> Shifted:
    """The last step of ``ids`` run right, with only its own position off by ``shift``, and with all shifted."""
    ids = [int(i) for i in ids]
    if len(ids) < 2:
        raise ValueError("Shifting a step needs a text of at least two tokens.")
    last = len(ids) - 1
    right = _last_logits(bundle, ids, 0, last)
    last_off = _last_logits(bundle, ids, 0, last + shift)
    all_off = _last_logits(bundle, ids, shift, last + shift)

    def tops(logits):
        return torch.topk(logits, top).indices.tolist()
    return Shifted(last, shift, tops(right), tops(last_off), tops(all_off),
                   float((right - last_off).abs().max()), kl_bits(right, last_off),
                   float((right - all_off).abs().max()), kl_bits(right, all_off))


# ---------------------------------------------------------------- left padding
@dataclass(frozen=True)
class PaddedRows:
    """Two texts in one left-padded decode pass: the position ids each row's next token gets."""

    lengths: list[int]  # real tokens cached per row
    width: int  # columns of the padded cache
    own_positions: list[int]  # what the batcher feeds: each row's real length
    column_positions: list[int]  # what counting columns would give: the width, for every row
    max_delta_own: float  # the short row's logits vs its solo pass, own positions
    max_delta_column: float  # ... with the column count as its position
    top_changed_column: bool  # the short row's top token differs from solo with column positions


def padded_positions(bundle, short: list[int], long: list[int]) -> PaddedRows:
    """Decode one token for ``short`` and ``long`` (each without its last token cached) in one padded pass."""
    if len(short) < 2 or len(long) < 2:
        raise ValueError("Each row needs at least two tokens.")
    caches = []
    for ids in (short, long):
        cache = decode.new_cache(bundle)
        decode.forward(bundle, ids[:-1], cache)
        caches.append(cache)
    solo = decode.forward(bundle, [short[-1:]], decode.copy_cache(caches[0], bundle)).logits[0]
    joined, mask = left_padded_cache(bundle, caches)
    lengths = [int(n) for n in mask.sum(dim=1)]
    width = int(mask.shape[1])
    mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.long)], dim=1)
    tokens = torch.tensor([[short[-1]], [long[-1]]])
    results = []
    for positions in (lengths, [width, width]):
        padded = decode.copy_cache(joined, bundle)
        out = decode.forward(bundle, tokens, padded, attention_mask=mask,
                             position_ids=torch.tensor(positions).view(-1, 1)).logits[0]
        results.append(out)
    return PaddedRows(lengths, width, lengths, [width, width], float((results[0] - solo).abs().max()),
                      float((results[1] - solo).abs().max()),
                      int(torch.argmax(results[1])) != int(torch.argmax(solo)))
