"""Requests of one's own through the batcher: every step is answered, they share passes, and the batcher's count of
other owners drops them once they end."""
import gc

import pytest
import torch

from autoreg_core.engine import decode
from autoreg_core.experiments.own_requests import send_own_requests
from autoreg_core.runtime.batcher import DecodeBatcher

pytestmark = pytest.mark.usefixtures("one_thread")


def _greedy(bundle, ids: list[int], first: int, steps: int) -> list[int]:
    cache = decode.new_cache(bundle)
    decode.forward(bundle, [ids], cache)
    out, token = [first], first
    for _ in range(steps - 1):
        token = int(torch.argmax(decode.forward(bundle, [[token]], cache).logits[0]))
        out.append(token)
    return out


def test_own_requests_share_passes_and_each_gets_its_solo_greedy_tokens(tiny):
    batcher = DecodeBatcher(tiny, gather_ms=20.0, workers=1)
    ids = tiny.tokenizer("The cat sat on the mat.")["input_ids"]
    got = send_own_requests(tiny, batcher, ids, requests=4, steps=5)
    assert (got.requests, got.steps) == (4, 20) and [len(r) for r in got.rows] == [4 * [5]][0]
    firsts = torch.topk(decode.forward(tiny, [ids]).logits[0].float(), 4).indices.tolist()
    assert [t[0] for t in got.tokens] == firsts and len(set(firsts)) == 4  # four different starts
    for first, tokens in zip(firsts, got.tokens):
        assert tokens == _greedy(tiny, ids, first, 5)
    assert got.largest_pass > 1  # steps rode together
    passes = batcher.passes()
    assert got.passes == len(passes) and sum(p.rows for p in passes) == 20 and len(passes) < 20
    assert got.started <= min(p.at for p in passes)  # sent before any of their passes ended: "sent N s ago" holds


def test_others_stepping_counts_live_owners_but_me_and_forgets_the_gone(tiny):
    batcher = DecodeBatcher(tiny, workers=1)
    ids = tiny.tokenizer("A bird")["input_ids"]

    class Tab:
        pass

    me, other = Tab(), Tab()
    assert batcher.others_stepping(me) == 0
    for owner in (me, other):
        cache = decode.new_cache(tiny)
        logits = decode.forward(tiny, [ids], cache).logits[0]
        batcher.decode(cache, int(torch.argmax(logits)), owner=owner)
    assert batcher.others_stepping(me) == 1  # the other tab
    assert batcher.others_stepping(other) == 1  # seen from the other tab: me
    assert batcher.others_stepping(None) == 2
    assert batcher.others_stepping(me, within_s=0.0) == 0  # outside the window
    del other, owner  # the loop variable held it too
    gc.collect()
    assert batcher.others_stepping(me) == 0  # a closed tab no longer counts
    send_own_requests(tiny, batcher, ids, requests=3, steps=2)
    gc.collect()
    assert batcher.others_stepping(me) == 0  # ended requests do not count as others


def test_a_request_of_nothing_is_refused(tiny):
    batcher = DecodeBatcher(tiny, workers=1)
    with pytest.raises(ValueError):
        send_own_requests(tiny, batcher, [], requests=2, steps=2)
    with pytest.raises(ValueError):
        send_own_requests(tiny, batcher, [1, 2], requests=0, steps=2)
