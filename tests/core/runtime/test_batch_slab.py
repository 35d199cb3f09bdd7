"""The batcher's cheaper join (``padding.slab_cache``) and write-back (``padding.write_back``): the same values
as the left-padded join and ``cache.update`` they replace, bit for bit, and a solo pass's tokens over whole runs."""
import sys
import threading

import pytest
import torch
from transformers import DynamicCache

from autoreg_core.engine import decode
from autoreg_core.engine.padding import SlabLayer, left_padded_cache, slab_cache
from autoreg_core.runtime import batcher as batcher_module
from autoreg_core.runtime.batcher import DecodeBatcher, timed_batched_decode, tune_gil
from core.runtime.test_batcher import PROMPTS, _prefilled  # the batcher's own tests' texts and prefill

pytestmark = pytest.mark.usefixtures("one_thread")


def _old_pass(bundle, caches, tokens):
    """The join and write-back the batcher used before: ``left_padded_cache``, a concatenating pass, ``update``."""
    joined, mask = left_padded_cache(bundle, caches)
    lengths = mask.sum(dim=1)
    mask = torch.cat([mask, torch.ones(len(caches), 1, dtype=torch.long)], dim=1)
    fwd = decode.forward(bundle, torch.tensor(tokens).view(-1, 1), joined, attention_mask=mask,
                         position_ids=lengths.view(-1, 1))
    for i, layer in enumerate(joined.layers):
        for row, cache in enumerate(caches):
            cache.update(layer.keys[row:row + 1, :, -1:].clone(), layer.values[row:row + 1, :, -1:].clone(), i)
    return list(fwd.logits)


def _same_cache(a: DynamicCache, b: DynamicCache) -> bool:
    return len(a.layers) == len(b.layers) and all(
        torch.equal(x.keys, y.keys) and torch.equal(x.values, y.values) for x, y in zip(a.layers, b.layers))


def test_the_slab_holds_the_left_padded_cache_and_a_spare_column(tiny):
    caches = [_prefilled(tiny, p)[1] for p in PROMPTS]
    padded, mask = left_padded_cache(tiny, caches)
    slab, slab_mask = slab_cache(tiny, caches)
    assert torch.equal(mask, slab_mask)
    for a, b in zip(padded.layers, slab.layers):
        assert isinstance(b, SlabLayer) and torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values)
        assert b.slab_keys.shape[-2] == a.keys.shape[-2] + 1
    assert slab.get_seq_length() == padded.get_seq_length() == max(c.get_seq_length() for c in caches)


def test_sixteen_passes_give_the_old_joins_logits_and_caches_bit_for_bit(tiny):
    """Two copies of eight tabs step greedily together, one through the old join, one through the slab: every
    pass's logits, every chosen id (whole sequences) and every cache equal."""
    old = [_prefilled(tiny, p) for p in PROMPTS]
    new = [_prefilled(tiny, p) for p in PROMPTS]
    old_logits, new_logits = [lg for _, _, lg in old], [lg for _, _, lg in new]
    old_ids, new_ids = [[] for _ in PROMPTS], [[] for _ in PROMPTS]
    for _ in range(16):
        old_tokens = [int(torch.argmax(lg)) for lg in old_logits]
        new_tokens = [int(torch.argmax(lg)) for lg in new_logits]
        for row, (a, b) in enumerate(zip(old_tokens, new_tokens)):
            old_ids[row].append(a)
            new_ids[row].append(b)
        old_logits = _old_pass(tiny, [c for _, c, _ in old], old_tokens)
        new_logits, timing = timed_batched_decode(tiny, [c for _, c, _ in new], new_tokens)
        assert all(torch.equal(a, b) for a, b in zip(old_logits, new_logits))
        assert timing.join_ms >= 0 and timing.write_ms >= 0 and timing.model_ms > 0
    assert new_ids == old_ids and all(len(ids) == 16 for ids in new_ids)
    for (_, a, _), (_, b, _) in zip(old, new):
        assert _same_cache(a, b)


def test_rows_written_back_step_on_alone_as_a_solo_run_does(tiny):
    """After shared passes, each tab's cache goes on solo (concatenating onto the written-back views), is cut
    back (Undo) and steps again: its ids equal a run that was solo all along, and its logits within 1e-4."""
    rows = [_prefilled(tiny, p) for p in PROMPTS[:4]]
    solo = [_prefilled(tiny, p) for p in PROMPTS[:4]]
    logits = [lg for _, _, lg in rows]
    got, want = [[] for _ in rows], [[] for _ in rows]
    for _ in range(4):
        tokens = [int(torch.argmax(lg)) for lg in logits]
        logits, _ = timed_batched_decode(tiny, [c for _, c, _ in rows], tokens)
        for row, t in enumerate(tokens):
            got[row].append(t)
    for row, (_, cache, _) in enumerate(rows):
        cache.crop(-1)  # Undo the last step, then go on alone
        got[row].pop()
        lg = decode.forward(tiny, [[got[row][-1]]], decode.copy_cache(cache, tiny)).logits[0]  # a look, not a step
        for _ in range(5):
            t = int(torch.argmax(lg))
            got[row].append(t)
            lg = decode.forward(tiny, [[t]], cache).logits[0]
        _, solo_cache, solo_lg = solo[row]
        for _ in range(3 + 5):
            t = int(torch.argmax(solo_lg))
            want[row].append(t)
            solo_lg = decode.forward(tiny, [[t]], solo_cache).logits[0]
        assert float((lg - solo_lg).abs().max()) < 1e-4
        assert cache.get_seq_length() == solo_cache.get_seq_length()
    assert got == want and all(len(ids) == 8 for ids in got)


def test_caches_of_other_layer_kinds_take_the_old_join(tiny):
    caches = [_prefilled(tiny, p)[1] for p in PROMPTS[:2]]

    class Other(type(caches[0].layers[0])):
        """Any layer kind the slab was not written for."""

    caches[1].layers[0].__class__ = Other
    assert slab_cache(tiny, caches) is None
    twins = [_prefilled(tiny, p)[1] for p in PROMPTS[:2]]
    logits, timing = timed_batched_decode(tiny, caches, [5, 7])
    assert all(torch.equal(a, b) for a, b in zip(logits, _old_pass(tiny, twins, [5, 7])))
    assert all(_same_cache(a, b) for a, b in zip(caches, twins))


def test_the_breakdown_counts_every_pass_and_row(tiny):
    mine = DecodeBatcher(tiny, gather_ms=20.0, workers=1)
    start = threading.Barrier(len(PROMPTS))

    def tab(i: int) -> None:
        _, cache, logits = _prefilled(tiny, PROMPTS[i])
        start.wait()
        for _ in range(6):
            logits = mine.decode(cache, int(torch.argmax(logits))).logits

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(len(PROMPTS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    totals, seen = mine.totals(), mine.breakdown()
    assert (seen.passes, seen.rows) == (totals.passes, totals.tokens) == (seen.passes, 6 * len(PROMPTS))
    means = seen.means()
    assert means["rows_per_pass"] == round(seen.rows / seen.passes, 2) > 1
    assert means["mean_queued_ms"] >= 0 and means["mean_woke_ms"] >= 0 and means["mean_model_ms"] > 0
    assert seen.forward_ms >= seen.model_ms


def test_the_switch_interval_is_shortened_when_asked_and_never_lengthened(monkeypatch):
    from autoreg_server.settings import Settings

    def interval(value: str) -> float:
        return Settings.from_environ({"AUTOREG_SWITCH_INTERVAL_MS": value}).switch_interval_ms

    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        assert tune_gil(interval("0")) == pytest.approx(5.0)  # 0: Python's own
        assert tune_gil() == pytest.approx(5.0 if batcher_module.SWITCH_INTERVAL_MS == 0 else
                                           batcher_module.SWITCH_INTERVAL_MS)
        assert tune_gil(interval("0.5")) == pytest.approx(0.5)
        assert tune_gil(interval("2")) == pytest.approx(0.5)  # never lengthened
        assert tune_gil(interval("x")) == pytest.approx(0.5)  # unreadable: the default, no longer
    finally:
        sys.setswitchinterval(before)
