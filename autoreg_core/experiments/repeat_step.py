"""One timed decode step that leaves the cache as it found it, so every repeat reads the same positions.

The step appends its token's keys and values; cropping them off afterwards restores the cache, except in a
sliding-window layer past its window, which has already dropped its oldest position to make room (transformers
then refuses the crop). For such a cache the step runs on a copy instead, made outside the timed pass.
"""
from __future__ import annotations

import torch

from autoreg_core.engine import decode


def slides(cache) -> bool:
    """Whether any layer of ``cache`` keeps only a window of recent positions."""
    return any(getattr(layer, "sliding_window", None) for layer in cache.layers)


def step_ms(bundle, cache, tokens: torch.Tensor) -> float:
    """Milliseconds of one forward pass of ``tokens`` on ``cache``; ``cache`` holds the same positions after."""
    if slides(cache):
        return decode.forward(bundle, tokens, decode.copy_cache(cache, bundle)).ms
    ms = decode.forward(bundle, tokens, cache).ms
    cache.crop(-tokens.shape[1])
    return ms
