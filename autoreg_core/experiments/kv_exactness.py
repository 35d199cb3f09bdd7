"""Why the KV cache is exact: recompute every cached key and value from scratch and compare.

Under the causal mask a position attends only to itself and earlier positions, so its keys and values
in every layer depend only on the tokens up to it. Appending later tokens never changes them, which
is why a decode step may reuse them. This module checks it on the live session: one fresh pass over
the whole text, without a cache, and the largest difference from what the cache holds.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from autoreg_core.engine import decode
from autoreg_core.engine.model_spec import dtype_name

ROUNDING_EPS = {"float32": 64, "float16": 16, "bfloat16": 16}  # machine epsilons per dtype; others: float32's
"""Measured on SmolLM2-135M on CPU after 1, 10, 30 and 200 greedy decode steps: at most 1.7e-6 relative in float32
(about 14 epsilons) and 0.013 in bfloat16 (about 2), so the bound leaves room for longer texts and other models
(float32: 7.6e-6 relative; bfloat16: 0.125, not half the largest value). Not measured on a GPU."""


@dataclass(frozen=True)
class RecomputeCheck:
    """The cached K/V against a from-scratch recomputation of the same positions."""
    positions: int
    layers: int
    per_layer: tuple[float, ...]  # largest |cached − recomputed| over that layer's K and V
    compared: tuple[int, ...]  # per layer, the positions compared: the last ones its cache keeps (fewer when sliding)
    largest_value: float  # largest |K| or |V| anywhere: the scale the differences compare with
    dtype: str  # the cache's keys' dtype ("float32", "bfloat16" …): the precision its rounding comes from

    @property
    def max_abs_diff(self) -> float:
        return max(self.per_layer, default=0.0)

    @property
    def relative(self) -> float:
        """The largest difference as a share of the largest value (float rounding is about 1e-7 in fp32)."""
        return self.max_abs_diff / self.largest_value if self.largest_value else 0.0

    @property
    def rounding_eps(self) -> int:
        return ROUNDING_EPS.get(self.dtype, ROUNDING_EPS["float32"])

    @property
    def rounding_bound(self) -> float:
        """The largest relative difference read as rounding: ``rounding_eps`` machine epsilons of the cache's dtype."""
        return self.rounding_eps * torch.finfo(getattr(torch, self.dtype)).eps

    @property
    def within_rounding(self) -> bool:
        return self.relative <= self.rounding_bound


def _tensors(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(layer.keys, layer.values) for layer in getattr(cache, "layers", []) if layer.keys is not None]


def recompute_check(bundle, session) -> RecomputeCheck:
    """Copy the session's cache under its lock, run one cache-free pass over the same tokens, compare."""
    with session.lock:
        if session.cache is None or session.cache_len == 0:
            raise ValueError("The cache is empty: run the prefill (or a step) first.")
        ids = list(session.ids[:session.cache_len])
        cached = [(k.clone(), v.clone()) for k, v in _tensors(session.cache)]
    fresh = DynamicCache()
    decode.forward(bundle, ids, fresh)
    per_layer, compared, largest = [], [], 0.0
    dtype = dtype_name(cached[0][0].dtype if cached else bundle.dtype)
    for (k, v), (fk, fv) in zip(cached, _tensors(fresh), strict=True):
        kept = k.shape[-2]  # a sliding layer holds only its window's last positions: compare those
        fk, fv = fk[:, :, fk.shape[-2] - kept:], fv[:, :, fv.shape[-2] - kept:]
        if k.shape != fk.shape or v.shape != fv.shape:
            raise ValueError(f"Cache shapes differ: {tuple(k.shape)} against {tuple(fk.shape)}.")
        diff = torch.maximum((k.float() - fk.float()).abs().max(), (v.float() - fv.float()).abs().max())
        per_layer.append(float(diff))
        compared.append(kept)
        largest = max(largest, float(k.abs().max()), float(v.abs().max()))
    return RecomputeCheck(positions=len(ids), layers=len(per_layer), per_layer=tuple(per_layer),
                          compared=tuple(compared), largest_value=largest, dtype=dtype)
