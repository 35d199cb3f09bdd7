"""When the cache runs out: keep only the most recent positions (a sliding-window cache).

A server whose KV memory is full has few choices: refuse or queue the request, pause (preempt) a
request and recompute or swap its cache later, or keep a bounded cache per request by evicting old
positions. This module does the last one on the loaded model with transformers' own
``DynamicSlidingWindowLayer``: a ``DynamicCache`` built from a copy of the model's config that says
every layer is a sliding-window layer of width W. With it, each decode step attends to its own
position plus the last W − 1 cached ones, and the cache tensors never hold more than W − 1 positions;
older keys and values are dropped. Positions keep their original numbers (RoPE is not re-indexed).

The prompt itself is still read with full attention in the prefill (the model's own mask is a plain
causal one, and the layer hands the whole chunk to the pass that brings it); the window bites from
the first decode step on.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from transformers import DynamicCache
from transformers.cache_utils import DynamicSlidingWindowLayer

from autoreg_core.experiments.prefill_decode import GreedyRun, greedy_run

MIN_WINDOW = 2  # a window of 1 would keep nothing but the new token (and the layer then keeps everything)


def sliding_cache(bundle, window: int) -> DynamicCache:
    """An empty cache whose every layer keeps at most ``window − 1`` positions between passes."""
    if int(window) < MIN_WINDOW:
        raise ValueError(f"The window must be at least {MIN_WINDOW} positions, got {window}.")
    config = copy.deepcopy(bundle.config)
    config.sliding_window = int(window)
    config.layer_types = ["sliding_attention"] * int(config.num_hidden_layers)
    cache = DynamicCache(config=config)
    if not all(isinstance(layer, DynamicSlidingWindowLayer) for layer in cache.layers):
        raise ValueError(f"{bundle.name}: transformers did not build sliding-window layers for this model.")
    return cache


def first_difference(a: list[int], b: list[int]) -> int | None:
    """The first index where two token lists differ (a length difference counts); None when equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


@dataclass
class WindowComparison:
    """The same greedy generation with the full cache and with a sliding window of ``window`` positions."""

    window: int
    full: GreedyRun
    windowed: GreedyRun

    @property
    def diverges_at(self) -> int | None:
        """Index into the generated tokens where the two texts part (None: identical)."""
        return first_difference(self.full.generated_ids, self.windowed.generated_ids)


def compare_window(bundle, prompt_ids: list[int], n_new: int, window: int,
                   should_stop: Callable[[], bool] | None = None) -> WindowComparison:
    """Generate greedily twice from the same prompt: full cache, then sliding window."""
    full = greedy_run(bundle, prompt_ids, n_new, should_stop=should_stop)
    windowed = greedy_run(bundle, prompt_ids, n_new, cache=sliding_cache(bundle, window),
                          should_stop=should_stop)
    return WindowComparison(int(window), full, windowed)
