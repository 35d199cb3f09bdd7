"""Rows of different lengths in one KV cache: left padding, one home for it.

Each row's keys and values sit at the right end of a common width; zeros fill the left, an
attention mask (1 = a real position) hides them, and position ids count a row's real tokens only,
so every row computes what it would compute alone. The serving lesson's scheduler and the app's
cross-tab decode batcher both build their batched caches here.
"""
from __future__ import annotations

import torch
from transformers import DynamicCache


def pad_left(tensor: torch.Tensor, width: int) -> torch.Tensor:
    """Zeros added on the left of the position axis (-2 for K/V, -1 for a mask) up to ``width``."""
    axis = -2 if tensor.dim() == 4 else -1
    missing = width - tensor.shape[axis]
    if missing == 0:
        return tensor
    shape = list(tensor.shape)
    shape[axis] = missing
    return torch.cat([tensor.new_zeros(shape), tensor], dim=axis)


def rebuild(bundle, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> DynamicCache:
    """A DynamicCache holding these (keys, values) per layer."""
    return DynamicCache(layers, config=bundle.config)


def left_padded_cache(bundle, caches: list[DynamicCache]) -> tuple[DynamicCache, torch.Tensor]:
    """Separate one-row caches joined into one [rows, …] cache, left-padded to the longest, and its mask."""
    lengths = [int(c.get_seq_length()) for c in caches]
    width = max(lengths)
    layers = [(torch.cat([pad_left(c.layers[i].keys, width) for c in caches]),
               torch.cat([pad_left(c.layers[i].values, width) for c in caches]))
              for i in range(len(caches[0].layers))]
    mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths], dtype=torch.long)
    return rebuild(bundle, layers), mask
