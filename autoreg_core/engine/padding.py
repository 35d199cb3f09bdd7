"""Rows of different lengths in one KV cache: left padding, one home for it.

Each row's keys and values sit at the right end of a common width; zeros fill the left, an
attention mask (1 = a real position) hides them, and position ids count a row's real tokens only,
so every row computes what it would compute alone. The serving lesson's scheduler and the app's
cross-tab decode batcher both build their batched caches here.
"""
from __future__ import annotations

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer


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


class SlabLayer(DynamicLayer):
    """One layer of a joined cache whose next column is already allocated (``slab_cache``).

    The pass's ``update`` writes the new key and value into that column instead of concatenating, which
    would copy every row's whole cache once more; the tensors the model reads hold the same values.
    """

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, width: int):
        super().__init__()
        self.slab_keys, self.slab_values, self.width = keys, values, width
        self.dtype, self.device = keys.dtype, keys.device
        self.keys, self.values = keys[:, :, :width], values[:, :, :width]
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if self.keys.shape[-2] != self.width or key_states.shape[-2] != self.slab_keys.shape[-2] - self.width:
            return super().update(key_states, value_states, *args, **kwargs)  # not the one step it was made for
        self.slab_keys[:, :, self.width:].copy_(key_states)
        self.slab_values[:, :, self.width:].copy_(value_states)
        self.keys, self.values = self.slab_keys, self.slab_values
        return self.keys, self.values


def slab_cache(bundle, caches: list[DynamicCache], new: int = 1) -> tuple[DynamicCache, torch.Tensor] | None:
    """``left_padded_cache`` with room for ``new`` more positions, built with one allocation per layer and
    each row's keys and values copied once (one ``_foreach_copy_`` for the whole cache): a pass of 12 rows
    runs a few dozen ops here instead of about 1,500, each of which gives the GIL up and waits to take it back.

    None when a cache is not plain ``DynamicLayer``s (the caller joins them with ``left_padded_cache``).
    """
    joined = DynamicCache(config=bundle.config)
    if any(type(layer) is not DynamicLayer for c in [joined, *caches] for layer in c.layers) or \
            any(len(c.layers) != len(joined.layers) for c in caches):
        return None
    lengths = [int(c.get_seq_length()) for c in caches]
    width, rows = max(lengths), len(caches)
    first = caches[0].layers[0].keys
    heads, dim = first.shape[1], first.shape[-1]
    slab = first.new_empty((len(joined.layers), 2, rows, heads, width + new, dim))
    for row, n in enumerate(lengths):  # zeros only where a row has no position (the pass writes the spare column)
        if n < width:
            slab[:, :, row, :, :width - n].zero_()
    targets, sources = [], []
    for i in range(len(joined.layers)):
        for row, (cache, n) in enumerate(zip(caches, lengths)):
            if n:
                targets += [slab[i, 0, row, :, width - n:width], slab[i, 1, row, :, width - n:width]]
                sources += [cache.layers[i].keys[0], cache.layers[i].values[0]]
        joined.layers[i] = SlabLayer(slab[i, 0], slab[i, 1], width)
    if targets:
        torch._foreach_copy_(targets, sources)
    mask = torch.tensor([[0] * (width - n) + [1] * n for n in lengths], dtype=torch.long)
    return joined, mask


def write_back(joined: DynamicCache, caches: list[DynamicCache], lengths: list[int]) -> None:
    """Each row's cache becomes its old positions plus the pass's new ones, read from the joined cache.

    One buffer per row holds every layer (one allocation instead of one per layer, key and value) and one
    ``_foreach_copy_`` fills them all; each layer's keys and values are views into its row's buffer.
    """
    first = joined.layers[0].keys
    layers, heads, dim, width = len(joined.layers), first.shape[1], first.shape[-1], first.shape[-2]
    buffers = [first.new_empty((layers, 2, 1, heads, n, dim)) for n in lengths]
    targets, sources = [], []
    for i, layer in enumerate(joined.layers):
        for row, n in enumerate(lengths):
            targets += [buffers[row][i, 0], buffers[row][i, 1]]
            sources += [layer.keys[row:row + 1, :, width - n:], layer.values[row:row + 1, :, width - n:]]
    torch._foreach_copy_(targets, sources)
    for row, cache in enumerate(caches):
        for i, layer in enumerate(cache.layers):
            if not layer.is_initialized:
                layer.lazy_initialization(buffers[row][i, 0], buffers[row][i, 1])
            layer.keys, layer.values = buffers[row][i, 0], buffers[row][i, 1]
