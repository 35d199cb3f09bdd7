"""The attention a session captured, arranged by query position: one row per token fed in.

Rows of the full picture (the causal triangle) come from two places:

* the prefill pass: one row per prompt token (``PrefillRecord.attention`` [L, H, P, P]);
* each decode step: the row of the token just fed in (``StepRecord.attention`` [L, H, cache_len]).

Steps taken while capture was off have no row. ``backfill`` recomputes the missing rows with one
full forward pass over the sequence on a fresh cache and hands them to ``Session.fill_attention``;
until then they are reported as missing, never invented. Read under ``session.lock`` for one
consistent picture while a step may be running.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from autoreg_core.engine import decode
from autoreg_core.engine.attention import attention_weights, query_to_kv_head, supports_attention
from autoreg_core.engine.model_spec import gqa_group
from autoreg_core.engine.session import MAX_PREFILL_CAPTURE

# Full-sequence recomputation builds [layers, heads, N, N], like prefill capture: the same bound.
MAX_FULL_TOKENS = MAX_PREFILL_CAPTURE

PREFILL, DECODE, MISSING = "prefill", "decode", "missing"


# ---------------------------------------------------------------- rows
def n_rows(session) -> int:
    """Query positions that have been through the model and have a record: the cache length.

    (Bounded by the records so a reader racing a step in progress never indexes past them.)
    """
    pre = session.prefill_record
    if pre is None:
        return 0
    return min(int(session.cache_len), pre.n_tokens + len(session.records))


def row_sources(session) -> list[str]:
    """For each query position 0..N-1: 'prefill', 'decode' or 'missing' (not captured)."""
    pre = session.prefill_record
    if pre is None:
        return []
    sources = [PREFILL if pre.attention is not None else MISSING] * pre.n_tokens
    sources += [DECODE if rec.attention is not None else MISSING for rec in session.records]
    return sources[:n_rows(session)]


def attention_row(session, pos: int) -> torch.Tensor | None:
    """Attention of the query at ``pos`` over keys 0..pos: float32 [layers, heads, pos + 1], or None."""
    pre = session.prefill_record
    if pre is None or not 0 <= pos < n_rows(session):
        return None
    if pos < pre.n_tokens:
        return None if pre.attention is None else pre.attention[:, :, pos, :pos + 1].float()
    rec = session.records[pos - pre.n_tokens]
    return None if rec.attention is None else rec.attention[:, :, :pos + 1].float()


def latest_row(session) -> tuple[int, torch.Tensor | None] | None:
    """(position, row) of the newest query: the last token fed in. None before the prefill."""
    n = n_rows(session)
    return None if n == 0 else (n - 1, attention_row(session, n - 1))


def select_heads(row: torch.Tensor, layer: int, head: int | None) -> np.ndarray:
    """One layer's weights for one head, or the mean over heads when ``head`` is None."""
    weights = row[layer]
    weights = weights.mean(dim=0) if head is None else weights[head]
    return weights.float().numpy()


def triangle(session, layer: int, head: int | None) -> tuple[np.ndarray, list[str]]:
    """The [N, N] attention matrix of one layer/head (None = mean of heads), and each row's source.

    Row q = query position q, column k = key position k. Future keys (k > q) and rows that were
    not captured are NaN so a heatmap leaves them blank; every captured row sums to 1.
    """
    sources = row_sources(session)
    z = np.full((len(sources), len(sources)), np.nan, dtype=np.float32)
    for q, source in enumerate(sources):
        if source != MISSING:
            z[q, :q + 1] = select_heads(attention_row(session, q), layer, head)
    return z, sources


# ---------------------------------------------------------------- filling missing rows
def compute_full_attention(session, n_tokens: int | None = None) -> torch.Tensor:
    """Every row at once: one forward over the first ``n_tokens`` tokens (default: all rows) on a
    fresh cache → float32 [L, H, N, N]. Reads the model only; the session's cache is untouched.
    """
    bundle = session.bundle
    n = n_rows(session) if n_tokens is None else min(int(n_tokens), n_rows(session))
    fwd = decode.forward(bundle, session.ids[:n], decode.new_cache(bundle), hidden_states=True)
    with torch.inference_mode():
        return attention_weights(bundle.model, fwd.hidden_states, fwd.cache, q_start=0).cpu()


def can_backfill(session) -> tuple[bool, str]:
    """Whether the missing rows can be recomputed here, and why not."""
    if not supports_attention(session.bundle.model):
        return False, f"Attention capture does not support {type(session.bundle.model).__name__}."
    n = n_rows(session)
    if n == 0:
        return False, "Nothing has been through the model yet."
    if n > MAX_FULL_TOKENS:
        return False, (f"The sequence has {n} tokens; recomputing every row is limited to "
                       f"{MAX_FULL_TOKENS} to keep memory per tab bounded.")
    return True, ""


def backfill(session) -> int:
    """Fill every missing row (prefill and decode) from one full pass; returns rows filled."""
    ok, why = can_backfill(session)
    if not ok:
        raise ValueError(why)
    with session.lock:
        if MISSING not in row_sources(session):
            return 0
        return session.fill_attention(compute_full_attention(session))


def backfill_prompt(session) -> bool:
    """Fill the prompt rows only (the prefill redone with capture); True if they were filled."""
    pre = session.prefill_record
    if pre is None or pre.attention is not None or pre.n_tokens > MAX_FULL_TOKENS:
        return False
    if not supports_attention(session.bundle.model):
        return False
    with session.lock:
        return session.fill_attention(compute_full_attention(session, pre.n_tokens)) > 0


def ensure_prefill(session, capture: bool = True) -> bool:
    """Make sure the prompt has been through the model and, if ``capture``, that its attention rows
    exist (prompts up to MAX_FULL_TOKENS). True if anything was computed now."""
    ran = False
    if session.prefill_record is None:
        session.prefill(capture_attention=capture and session.prompt_len <= MAX_FULL_TOKENS)
        ran = True
    if capture:
        ran = backfill_prompt(session) or ran
    return ran


# ---------------------------------------------------------------- grouped-query attention
@dataclass(frozen=True)
class GQAInfo:
    """Which cached K/V head each query head reads."""

    n_heads: int
    n_kv_heads: int
    kv_of_query: list[int]  # query head h reads KV head kv_of_query[h]

    @property
    def group(self) -> int:
        return gqa_group(self.n_heads, self.n_kv_heads)

    def queries_of(self, kv: int) -> list[int]:
        return [h for h, k in enumerate(self.kv_of_query) if k == kv]


def gqa_info(n_heads: int, n_kv_heads: int) -> GQAInfo:
    return GQAInfo(n_heads, n_kv_heads, query_to_kv_head(n_heads, n_kv_heads))
