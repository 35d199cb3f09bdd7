"""The attention a session captured, arranged for display: one row per query position.

Rows of the full picture (the causal triangle) come from two places:

* the prefill pass: one row per prompt token (``PrefillRecord.attention`` [L, H, P, P]);
* each decode step: the row of the token just fed in (``StepRecord.attention`` [L, H, cache_len]).

Steps taken while capture was off have no row. ``backfill`` recomputes the missing rows with one
full forward pass over the sequence on a fresh cache; until then they are reported as missing,
never invented. Nothing here imports Streamlit.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import torch
from transformers import DynamicCache

from .attention import attention_weights, query_to_kv_head, supports_attention
from .session import MAX_PREFILL_CAPTURE

# Full-sequence recomputation stores [layers, heads, N, N] in float16, like prefill capture: same bound.
MAX_FULL_TOKENS = MAX_PREFILL_CAPTURE

PREFILL, DECODE, MISSING = "prefill", "decode", "missing"


def locked(session):
    """The session's lock as a context manager: read a consistent picture while a step may run."""
    return session.lock


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
    P = pre.n_tokens
    src = [PREFILL if pre.attention is not None else MISSING] * P
    for rec in session.records:
        src.append(DECODE if rec.attention is not None else MISSING)
    return src[:n_rows(session)]


def attention_row(session, pos: int) -> torch.Tensor | None:
    """Attention of the query at ``pos`` over keys 0..pos: float32 [layers, heads, pos + 1], or None."""
    pre = session.prefill_record
    if pre is None or pos < 0 or pos >= n_rows(session):
        return None
    P = pre.n_tokens
    if pos < P:
        if pre.attention is None:
            return None
        return pre.attention[:, :, pos, : pos + 1].float()
    rec = session.records[pos - P]
    if rec.attention is None:
        return None
    return rec.attention[:, :, : pos + 1].float()


def latest_row(session) -> tuple[int, torch.Tensor | None] | None:
    """(position, row) of the newest query: the last token fed in. None before the prefill."""
    N = n_rows(session)
    if N == 0:
        return None
    return N - 1, attention_row(session, N - 1)


def select_heads(row: torch.Tensor, layer: int, head: int | None) -> np.ndarray:
    """One layer's weights for one head, or the mean over heads when ``head`` is None."""
    x = row[layer]
    x = x.mean(dim=0) if head is None else x[head]
    return x.float().numpy()


def triangle(session, layer: int, head: int | None) -> tuple[np.ndarray, list[str]]:
    """The [N, N] attention matrix of one layer/head (None = mean of heads).

    Row q = query position q, column k = key position k. Future keys (k > q) and rows that were
    not captured are NaN so a heatmap leaves them blank; every captured row sums to 1.
    """
    sources = row_sources(session)
    N = len(sources)
    z = np.full((N, N), np.nan, dtype=np.float32)
    for q in range(N):
        if sources[q] == MISSING:
            continue
        row = attention_row(session, q)
        z[q, : q + 1] = select_heads(row, layer, head)
    return z, sources


# ---------------------------------------------------------------- filling missing rows
def compute_full_attention(session, n_tokens: int | None = None) -> torch.Tensor:
    """Every row at once: one forward over the first ``n_tokens`` cached tokens (default all) on a
    fresh cache → float32 [L, H, N, N]. Reads the model only; the session's cache is untouched.
    """
    bundle = session.bundle
    N = n_rows(session) if n_tokens is None else min(int(n_tokens), n_rows(session))
    ids = torch.tensor([session.ids[:N]], dtype=torch.long, device=bundle.device)
    cache = DynamicCache(config=bundle.config)
    with torch.inference_mode():
        out = bundle.model(input_ids=ids, past_key_values=cache, use_cache=True, output_hidden_states=True)
        return attention_weights(bundle.model, out.hidden_states, out.past_key_values, q_start=0).cpu()


def can_backfill(session) -> tuple[bool, str]:
    if not supports_attention(session.bundle.model):
        return False, f"Attention capture does not support {type(session.bundle.model).__name__}."
    N = n_rows(session)
    if N == 0:
        return False, "Nothing has been through the model yet."
    if N > MAX_FULL_TOKENS:
        return False, (f"The sequence has {N} tokens; recomputing every row is limited to "
                       f"{MAX_FULL_TOKENS} to keep memory per tab bounded.")
    return True, ""


def backfill(session) -> int:
    """Fill every missing row (prefill and decode) from one full pass; returns rows filled."""
    ok, why = can_backfill(session)
    if not ok:
        raise ValueError(why)
    with locked(session):
        missing_before = row_sources(session).count(MISSING)
        if missing_before == 0:
            return 0
        full = compute_full_attention(session).to(torch.float16)  # [L, H, N, N]
        pre = session.prefill_record
        P = pre.n_tokens
        if pre.attention is None:
            pre.attention = full[:, :, :P, :P].clone()
        for i, rec in enumerate(session.records):
            pos = P + i
            if rec.attention is None and pos < full.shape[2]:
                rec.attention = full[:, :, pos, : pos + 1].clone()
        return missing_before - row_sources(session).count(MISSING)


def backfill_prompt(session) -> bool:
    """Fill the prompt rows only (a pass over the prompt, i.e. the prefill redone); True if filled."""
    pre = session.prefill_record
    if pre is None or pre.attention is not None or pre.n_tokens > MAX_FULL_TOKENS:
        return False
    if not supports_attention(session.bundle.model):
        return False
    with locked(session):
        if pre.attention is None:
            pre.attention = compute_full_attention(session, pre.n_tokens).to(torch.float16)
    return True


def ensure_prefill(session, capture: bool = True) -> bool:
    """Make sure the prompt has been through the model and, if ``capture``, that its attention rows
    exist (prompts up to MAX_FULL_TOKENS). True if anything was computed now."""
    ran = False
    if session.prefill_record is None:
        small = session.prompt_len <= MAX_FULL_TOKENS
        session.prefill(capture_attention=capture and small)
        ran = True
    if capture:
        ran = backfill_prompt(session) or ran
    return ran


# ---------------------------------------------------------------- grouped-query attention
@dataclass(frozen=True)
class GQAInfo:
    n_heads: int
    n_kv_heads: int
    kv_of_query: list[int]  # query head h reads KV head kv_of_query[h]

    @property
    def group(self) -> int:
        return self.n_heads // self.n_kv_heads

    def queries_of(self, kv: int) -> list[int]:
        return [h for h, k in enumerate(self.kv_of_query) if k == kv]

    @property
    def saving(self) -> float:
        """Cache size with one K/V per query head divided by the actual size."""
        return self.n_heads / self.n_kv_heads


def gqa_info(n_heads: int, n_kv_heads: int) -> GQAInfo:
    return GQAInfo(n_heads, n_kv_heads, query_to_kv_head(n_heads, n_kv_heads))


# ---------------------------------------------------------------- links and stale widgets
def parse_index(raw, n: int, name: str, allow_mean: bool = False) -> tuple[int | None, str | None]:
    """A layer/head from a link or stale state → (valid index or None, message or None).

    ``allow_mean``: 'mean'/'avg' selects the mean over heads (returned as -1).
    """
    if raw is None or raw == "":
        return None, None
    text = str(raw).strip()
    if allow_mean and text.lower() in ("mean", "avg", "average"):
        return -1, None
    try:
        value = int(text)
    except ValueError:
        return None, f"{name} {text!r} in the link is not a number; it was ignored."
    if not 0 <= value < n:
        return None, (f"{name} {value} in the link does not exist: this model has {name}s 0–{n - 1}; "
                      "it was ignored.")
    return value, None


# ---------------------------------------------------------------- the token strip
def attention_strip_html(labels: list[str], weights: list[float] | np.ndarray, query_pos: int,
                         n_prompt: int) -> str:
    """Tokens as chips shaded by the attention weight they received (darkest = the row's max).

    Every label is escaped: model output and user text never become HTML.
    """
    w = np.asarray(weights, dtype=np.float64)
    top = float(np.nanmax(w)) if w.size and np.isfinite(w).any() else 0.0
    chips = []
    for pos, label in enumerate(labels):
        if pos < w.size and np.isfinite(w[pos]):
            alpha = w[pos] / top if top > 0 else 0.0
            style = f"background: rgba(232,89,12,{alpha:.3f});"
            tip = f"position {pos} · weight {w[pos]:.4f}"
        else:
            style = "background:#f2f2f2; color:#999;"
            tip = f"position {pos} · not visible to this query"
        if pos == query_pos:
            style += " outline:2px solid #1f6feb;"
            tip += " · the query (new token)"
        if pos < n_prompt:
            style += " border-bottom:2px dashed #98a2b3;"
            tip += " · prompt"
        text_color = " color:#fff;" if pos < w.size and np.isfinite(w[pos]) and top > 0 and w[pos] / top > 0.6 else ""
        chips.append(f'<span class="atok" style="{style}{text_color}" title="{html.escape(tip)}">'
                     f"{html.escape(label)}</span>")
    css = ("<style>.attstrip{line-height:2.2;font-family:ui-monospace,monospace;font-size:0.95rem}"
           ".attstrip .atok{padding:2px 4px;margin:1px;border-radius:4px;white-space:pre;"
           "display:inline-block}</style>")
    return css + '<div class="attstrip">' + "".join(chips) + "</div>"
