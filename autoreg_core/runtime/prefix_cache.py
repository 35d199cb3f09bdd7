"""Prefix caching: a prompt's prefill is done once, and every later tab with the same prompt starts from it.

The store keeps the KV cache and the next-token logits of recent prompts, keyed by the exact token
ids, the model (the very model object, held weakly, plus its name) and its dtype: the idea of vLLM's
automatic prefix caching and SGLang's RadixAttention, here for whole prompts. A hit hands out a
**copy** of every layer's keys and values, so the tab that extends it never touches the stored one.
Memory is bounded: entries are dropped least recently used first once their K and V bytes pass the
budget (on a server, its operator's ``AUTOREG_PREFIX_CACHE_MB``; 0 turns the store off).
"""
from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from autoreg_core.engine.model_spec import dtype_name

DEFAULT_BUDGET = 64 * 2**20  # bytes, when nobody says otherwise


def _key(bundle, ids) -> tuple:
    return (id(bundle.model), bundle.name, dtype_name(bundle.dtype), str(bundle.device), tuple(int(i) for i in ids))


def _layers(cache: DynamicCache) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]:
    return tuple((layer.keys.detach().clone(), layer.values.detach().clone()) for layer in cache.layers)


@dataclass
class Entry:
    model: weakref.ref
    layers: tuple[tuple[torch.Tensor, torch.Tensor], ...]
    logits: torch.Tensor
    prefill_ms: float
    bytes: int


@dataclass(frozen=True)
class Hit:
    """A tab's own copy of a stored prefill: its cache to extend, the next-token logits, the original pass's ms."""

    cache: DynamicCache
    logits: torch.Tensor
    prefill_ms: float
    copy_ms: float


@dataclass(frozen=True)
class Stats:
    hits: int
    misses: int
    saved_ms: float  # Σ over hits of the stored prefill's ms, minus the copies' ms
    bytes: int  # K and V bytes held now
    entries: int
    budget: int
    evicted: int

    @property
    def hit_rate(self) -> float:
        looked = self.hits + self.misses
        return self.hits / looked if looked else float("nan")


class PrefixCache:
    """Recent prompts' prefills, least recently used dropped first past ``budget`` bytes."""

    def __init__(self, budget: int):
        self.budget = int(budget)
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._evicted = 0
        self._saved_ms = 0.0

    def lookup(self, bundle, ids) -> Hit | None:
        """A fresh copy of the stored prefill of exactly ``ids`` on this model and dtype, or None (a miss)."""
        if self.budget <= 0:
            return None
        key = _key(bundle, ids)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.model() is not bundle.model:  # another model took the same id
                del self._entries[key]
                entry = None
            if entry is None:
                self._misses += 1
                return None
            self._entries.move_to_end(key)
        t0 = time.perf_counter()
        layers = [(k.clone(), v.clone()) for k, v in entry.layers]
        hit = Hit(DynamicCache(layers, config=bundle.config), entry.logits.clone(), entry.prefill_ms,
                  (time.perf_counter() - t0) * 1000.0)
        with self._lock:
            self._hits += 1
            self._saved_ms += max(0.0, entry.prefill_ms - hit.copy_ms)
        return hit

    def store(self, bundle, ids, cache: DynamicCache, logits: torch.Tensor, prefill_ms: float) -> bool:
        """Keep a copy of a fresh prefill (the caller goes on extending its own); False when it cannot fit."""
        if self.budget <= 0:
            return False
        layers = _layers(cache)
        size = sum(k.nbytes + v.nbytes for k, v in layers) + logits.nbytes
        if size > self.budget:
            return False
        entry = Entry(weakref.ref(bundle.model), layers, logits.detach().clone(), float(prefill_ms), size)
        with self._lock:
            self._entries[_key(bundle, ids)] = entry
            self._entries.move_to_end(_key(bundle, ids))
            while sum(e.bytes for e in self._entries.values()) > self.budget:
                self._entries.popitem(last=False)
                self._evicted += 1
        return True

    def remember(self, bundle, ids, cache: DynamicCache, logits: torch.Tensor, ms: float) -> bool:
        """``store``, under the name a session's ``prefill_cache`` is called by (``engine.passes.PrefillCache``)."""
        return self.store(bundle, ids, cache, logits, ms)

    def stats(self) -> Stats:
        with self._lock:
            return Stats(self._hits, self._misses, self._saved_ms, sum(e.bytes for e in self._entries.values()),
                         len(self._entries), self.budget, self._evicted)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._hits = self._misses = self._evicted = 0
            self._saved_ms = 0.0


_SHARED: PrefixCache | None = None
_SHARED_LOCK = threading.Lock()


def shared(budget: int = DEFAULT_BUDGET) -> PrefixCache:
    """The process's one store (every tab of a server), made on first use with ``budget`` bytes (a server makes
    it as it loads its model, with its operator's budget; later calls get that one)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = PrefixCache(budget)
        return _SHARED

