"""Prefix caching: a hit gives the same logits and the same continuation as a fresh prefill, every tab gets
its own copy, memory stays under the budget (least recently used dropped first), and the session uses it."""
from __future__ import annotations

import pytest
import torch
from tiny import tiny_bundle

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode
from autoreg_core.engine.session import Session
from autoreg_core.runtime import prefix_cache

GREEDY = SamplingConfig(temperature=0.0)
PROMPTS = ["The cat sat on the mat. The dog sat on the", "Once upon a time there was a small village by the sea"]


def _fresh(bundle, ids):
    cache = decode.new_cache(bundle)
    fwd = decode.forward(bundle, ids, cache)
    return cache, fwd.logits[0], fwd.ms


def _greedy(bundle, cache, logits, n: int) -> list[int]:
    out = []
    for _ in range(n):
        out.append(int(torch.argmax(logits)))
        logits = decode.forward(bundle, [out[-1]], cache).logits[0]
    return out


def _cached(store, bundle, ids):
    cache, logits, ms = _fresh(bundle, ids)
    assert store.store(bundle, ids, cache, logits, ms)
    return cache, logits


@pytest.mark.parametrize("text", PROMPTS)
def test_a_hit_gives_the_fresh_prefills_logits_and_continuation(tiny, text):
    ids = tiny.tokenizer(text)["input_ids"]
    store = prefix_cache.PrefixCache(2**24)
    _cached(store, tiny, ids)
    hit = store.lookup(tiny, ids)
    cache, logits, _ = _fresh(tiny, ids)
    assert torch.equal(hit.logits, logits)  # whole logits, bit for bit
    assert hit.cache.get_seq_length() == cache.get_seq_length() == len(ids)
    assert _greedy(tiny, hit.cache, hit.logits, 8) == _greedy(tiny, cache, logits, 8)


def test_each_hit_is_its_own_copy_and_the_stored_one_never_changes(tiny):
    ids = tiny.tokenizer(PROMPTS[0])["input_ids"]
    store = prefix_cache.PrefixCache(2**24)
    _cached(store, tiny, ids)
    first = store.lookup(tiny, ids)
    first_tokens = _greedy(tiny, first.cache, first.logits, 6)  # extends the first copy by 6 positions
    second = store.lookup(tiny, ids)
    assert second.cache.get_seq_length() == len(ids)
    assert second.cache.layers[0].keys.data_ptr() != first.cache.layers[0].keys.data_ptr()
    assert _greedy(tiny, second.cache, second.logits, 6) == first_tokens
    stats = store.stats()
    assert (stats.hits, stats.misses, stats.entries) == (2, 0, 1)


def test_the_key_is_the_exact_ids_the_model_and_its_dtype(tiny):
    ids = tiny.tokenizer(PROMPTS[0])["input_ids"]
    store = prefix_cache.PrefixCache(2**24)
    _cached(store, tiny, ids)
    assert store.lookup(tiny, ids[:-1]) is None  # a prefix of the prompt is another key
    assert store.lookup(tiny, ids + [5]) is None
    other = tiny_bundle(seed=1)  # same name, same dtype, other weights
    assert other.name == tiny.name and store.lookup(other, ids) is None
    assert store.stats().misses == 3 and store.stats().hits == 0


def test_memory_stays_under_the_budget_least_recently_used_dropped_first(tiny):
    ids = [tiny.tokenizer(t)["input_ids"] for t in PROMPTS + ["def add(a, b):"]]
    sizes = []
    probe = prefix_cache.PrefixCache(2**30)
    for i in ids:
        _cached(probe, tiny, i)
        sizes.append(probe.stats().bytes - sum(sizes))
    store = prefix_cache.PrefixCache(sizes[0] + sizes[1] + sizes[2] - 1)  # all three do not fit
    _cached(store, tiny, ids[0])
    _cached(store, tiny, ids[1])
    assert store.lookup(tiny, ids[0]) is not None  # now ids[1] is the least recently used
    _cached(store, tiny, ids[2])
    assert store.lookup(tiny, ids[1]) is None and store.lookup(tiny, ids[0]) is not None
    stats = store.stats()
    assert stats.bytes == sizes[0] + sizes[2] <= stats.budget and stats.evicted == 1 and stats.entries == 2
    tiny_store = prefix_cache.PrefixCache(sizes[0] - 1)
    assert not tiny_store.store(tiny, ids[0], *_fresh(tiny, ids[0]))  # larger than the whole budget
    off = prefix_cache.PrefixCache(0)
    assert not off.store(tiny, ids[0], *_fresh(tiny, ids[0])) and off.lookup(tiny, ids[0]) is None


def test_the_budget_is_an_operator_setting(monkeypatch):
    from autoreg_server.settings import Settings

    def budget(value: str) -> int:
        return Settings.from_environ({"AUTOREG_PREFIX_CACHE_MB": value}).prefix_cache_bytes

    assert Settings().prefix_cache_bytes == prefix_cache.DEFAULT_BUDGET == 64 * 2**20
    assert budget("0") == 0
    assert budget("1.5") == int(1.5 * 2**20)
    for bad in ("-1", "lots"):
        with pytest.raises(ValueError, match="AUTOREG_PREFIX_CACHE_MB"):
            budget(bad)
    monkeypatch.setattr(prefix_cache, "_SHARED", None)
    assert prefix_cache.shared(budget("1.5")).budget == int(1.5 * 2**20)
    assert prefix_cache.shared().budget == int(1.5 * 2**20)  # the one store, as it was made


def test_sessions_with_the_same_prompt_share_one_prefill(tiny, monkeypatch):
    store = prefix_cache.PrefixCache(2**24)
    calls = []
    real = decode.forward
    monkeypatch.setattr(decode, "forward", lambda *a, **k: calls.append(len(a[1])) or real(*a, **k))
    a, b = Session(tiny, PROMPTS[1], prefill_cache=store), Session(tiny, PROMPTS[1], prefill_cache=store)
    first = [r.token_id for r in a.generate(6, GREEDY)]
    second = [r.token_id for r in b.generate(6, GREEDY)]
    assert first == second and len(first) == 6
    assert calls.count(a.prompt_len) == 1  # one prefill for both tabs, then one decode pass per step each
    assert torch.equal(a.records[0].full_logits(), b.records[0].full_logits())
    stats = store.stats()
    assert (stats.hits, stats.misses) == (1, 1) and stats.saved_ms >= 0.0
    assert b.prefill_record.time_ms == a.prefill_record.time_ms  # the pass the cache came from


def test_the_hit_matches_a_fresh_prefill_on_the_embedded_model(embedded):
    ids = embedded.tokenizer(PROMPTS[1])["input_ids"]
    store = prefix_cache.PrefixCache(2**26)
    _cached(store, embedded, ids)
    hit = store.lookup(embedded, ids)
    cache, logits, _ = _fresh(embedded, ids)
    assert torch.equal(hit.logits, logits)
    assert _greedy(embedded, hit.cache, hit.logits, 8) == _greedy(embedded, cache, logits, 8)
