"""The live KV cache as numbers: tensor shapes, measured bytes, and their history over a session.

Every decoder layer keeps two tensors, K and V, of shape ``[batch, kv_heads, positions, head_dim]``.
Prefill writes all prompt positions at once; each decode step appends one position. The formula
for their size lives in ``spec.ModelSpec.cache_bytes``; this module measures the tensors so the
page (and the tests) can show that the two agree byte for byte.
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from autoreg_core.engine.model_spec import ModelSpec, dtype_name


# ---------------------------------------------------------------- measuring a live cache
@dataclass(frozen=True)
class LayerCacheShape:
    layer: int
    keys: tuple[int, ...]  # [batch, kv_heads, positions, head_dim]
    values: tuple[int, ...]
    dtype: str
    nbytes: int  # measured: keys + values


def _filled_layers(cache):
    """(layer index, K, V, their bytes) for every layer of a transformers ``DynamicCache`` that holds tensors."""
    for i, layer in enumerate(getattr(cache, "layers", []) if cache is not None else []):
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if keys is not None and values is not None:
            yield i, keys, values, int(keys.numel() * keys.element_size() + values.numel() * values.element_size())


def layer_shapes(cache) -> list[LayerCacheShape]:
    """Shape and measured bytes of K and V in every layer of a transformers ``DynamicCache``."""
    return [LayerCacheShape(i, tuple(keys.shape), tuple(values.shape), dtype_name(keys.dtype), nbytes)
            for i, keys, values, nbytes in _filled_layers(cache)]


def measured_bytes(cache) -> int:
    """Bytes of every K and V tensor in the cache, counted from the tensors themselves (as ``layer_shapes`` does,
    without building its rows: every decode step records this, and the rows' dtype names were most of its cost)."""
    return sum(nbytes for *_, nbytes in _filled_layers(cache))


# ---------------------------------------------------------------- the cache over a session
@dataclass(frozen=True)
class CachePoint:
    step: int  # 0 = prefill, then decode steps 1, 2, ...
    phase: str  # "prefill" | "decode"
    positions: int
    measured_bytes: int
    formula_bytes: int
    ms: float  # forward time of this pass


def cache_timeline(session) -> list[CachePoint]:
    """Cache length and bytes after the prefill and after every decode step (measured per record)."""
    pre = session.prefill_record
    if pre is None:
        return []
    spec = session.bundle.spec
    points = [CachePoint(0, "prefill", pre.n_tokens, pre.cache_bytes, spec.cache_bytes(pre.n_tokens), pre.time_ms)]
    points += [CachePoint(rec.index, "decode", rec.cache_len, rec.cache_bytes, spec.cache_bytes(rec.cache_len),
                          rec.forward_ms) for rec in session.records]
    return points


@dataclass(frozen=True)
class PhaseTimes:
    """Prefill against decode, per token: the prefill's time per prompt token and the median decode step.

    The one place this arithmetic is written: the attention page's session (``phase_times``), a timed
    greedy run (``phases.GreedyRun``) and one point of the prefill sweep (``phases.PrefillPoint``) all
    read their numbers through ``PhaseTimes.measured``.
    """

    prefill_tokens: int
    prefill_ms: float
    prefill_ms_per_token: float
    decode_steps: int
    decode_ms_median: float  # median time of one decode step (one token); NaN without a step

    @classmethod
    def measured(cls, prefill_ms: float, prefill_tokens: int, decode_ms: Sequence[float]) -> PhaseTimes:
        """From one prefill's time over ``prefill_tokens`` tokens and the times of the decode steps."""
        return cls(prefill_tokens, prefill_ms, prefill_ms / max(1, prefill_tokens), len(decode_ms),
                   statistics.median(decode_ms) if len(decode_ms) else float("nan"))

    @property
    def ratio(self) -> float:
        """How many times longer a decode step takes than one prompt token inside the prefill."""
        if self.prefill_ms_per_token <= 0:
            return float("nan")
        return self.decode_ms_median / self.prefill_ms_per_token


def phase_times(session) -> PhaseTimes | None:
    """Measured prefill time per prompt token against the forward time of a decode step."""
    pre = session.prefill_record
    if pre is None or not session.records:
        return None
    return PhaseTimes.measured(pre.time_ms, pre.n_tokens, [r.forward_ms for r in session.records])


def solo_phase_times(session) -> PhaseTimes | None:
    """The prefill against the decode steps this session ran alone: a pass shared with other tabs' steps carries
    their rows too, so its time is not one step's (None until a solo step exists)."""
    pre = session.prefill_record
    solo = [r.forward_ms for r in session.records if r.pass_rows <= 1]
    if pre is None or not solo:
        return None
    return PhaseTimes.measured(pre.time_ms, pre.n_tokens, solo)


# ---------------------------------------------------------------- the seeds' worked example
@dataclass(frozen=True)
class WorkedExample:
    """A P-token prompt followed by T new tokens, in one model's cache bytes."""

    prompt_tokens: int
    new_tokens: int
    after_prefill: int  # bytes once the prompt has been through the model
    per_token: float  # bytes each decode step adds
    at_end: int  # bytes once every new token has been fed in

    @property
    def positions(self) -> int:
        return self.prompt_tokens + self.new_tokens


def worked_example(spec: ModelSpec, prompt_tokens: int = 50, new_tokens: int = 100) -> WorkedExample:
    """The cache of a ``prompt_tokens`` prompt + ``new_tokens`` generated tokens (a session here feeds
    every chosen token in, so the cache ends with prompt + new positions)."""
    return WorkedExample(prompt_tokens, new_tokens, spec.cache_bytes(prompt_tokens, 1),
                         spec.cache_bytes_per_position, spec.cache_bytes(prompt_tokens + new_tokens, 1))


def positions_processed(prompt_tokens: int, new_tokens: int, cached: bool) -> int:
    """Positions pushed through the model to choose ``new_tokens`` tokens after a prompt.

    Naive: the step choosing token i (from 0) re-reads the prompt and the i tokens before it, so
    Σ (P + i). Cached: the prefill reads the prompt, then each later step reads only the token just
    chosen; the last chosen token never has to be fed, so P + T − 1. (This app's session feeds it
    anyway, so the next distribution is ready: its cache ends with P + T positions.)
    """
    P, T = int(prompt_tokens), int(new_tokens)
    if T <= 0:
        return 0
    return P + T - 1 if cached else T * P + T * (T - 1) // 2
