"""A context ready to decode from: its ids, its KV cache and the logits for the next token.

Continuations and beam search start from a prefix. A session lends its own (no second prefill);
they copy the cache before they grow it, so the lender's cache is never touched.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from autoreg_core.engine import decode


@dataclass(frozen=True)
class Prefix:
    ids: tuple[int, ...]  # the whole context, prompt included
    cache: DynamicCache  # holds exactly ``ids``; read only (copy it with ``decode.copy_cache``)
    logits: torch.Tensor  # float32 [vocab]: the model's logits for the position after ``ids``


def prefill(bundle, ids) -> Prefix:
    """One forward pass over ``ids`` on a new cache."""
    ids = tuple(int(i) for i in ids)
    if not ids:
        raise ValueError("A prefix needs at least one token.")
    fwd = decode.forward(bundle, list(ids), decode.new_cache(bundle))
    return Prefix(ids, fwd.cache, fwd.logits[0])


def of_session(session) -> Prefix:
    """A session's context as it stands (prefilled first if needed: the only model call here)."""
    with session.lock:
        session.prefill()
        return Prefix(tuple(session.ids), session.cache, session.pending_logits)
