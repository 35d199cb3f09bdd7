"""Batch invariance: a step alone and in the batcher's shared passes; the search for a flipped greedy token
reports honestly both ways (a flip it cannot find, a flip it must find)."""
from __future__ import annotations

import pytest
import torch
from tiny import varied_bundle

from autoreg_core.experiments import batch_invariance as invariance
from autoreg_core.runtime.batcher import batched_decode

TEXT = [5, 77, 120, 33, 250, 19, 64, 201, 90, 12, 140]
OTHERS = [[7, 8, 9], [30, 31, 32, 33, 34, 35], [100, 101], [200, 201, 202, 203], [40, 41, 42, 43, 44, 45, 46, 47],
          [60, 61, 62, 63, 64], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80]]


def test_a_step_alone_and_in_shared_passes():
    bundle = varied_bundle()
    found = invariance.step_invariance(bundle, TEXT, OTHERS)
    assert [s.rows for s in found.sizes] == [2, 4, 8]
    assert 0 <= found.max_delta < 1e-3
    assert found.gap >= 0 and found.solo_top != found.solo_second
    assert found.could_flip == (found.gap <= 2 * found.max_delta)
    assert [s.top for s in found.flipped] == [s.top for s in found.sizes if s.top != found.solo_top]


def test_one_row_is_the_solo_pass_bit_for_bit():
    bundle = varied_bundle()
    found = invariance.step_invariance(bundle, TEXT, OTHERS, sizes=(1,))
    assert [(s.rows, s.max_delta) for s in found.sizes] == [(1, 0.0)] and not found.flipped
    assert not found.could_flip or found.gap == 0.0


def test_sizes_past_the_other_rows_are_left_out():
    found = invariance.step_invariance(varied_bundle(), TEXT, OTHERS[:2], sizes=(2, 3, 4, 8))
    assert [s.rows for s in found.sizes] == [2, 3]
    with pytest.raises(ValueError):
        invariance.step_invariance(varied_bundle(), [5], OTHERS)


def test_a_search_where_no_flip_is_possible_says_so_with_what_it_searched():
    """One-row passes are the solo pass itself: nothing can flip, and the report counts every step."""
    bundle = varied_bundle()
    search = invariance.search_flip(bundle, [TEXT[:4], TEXT[4:9], TEXT[2:5]], OTHERS, steps_each=3, sizes=(1,))
    assert search.found is None and not search.stopped
    assert (search.texts, search.steps, search.passes) == (3, 9, 9)
    assert search.largest_delta == 0.0 and search.smallest_gap < float("inf") and len(search.closest) >= 3


def test_a_search_stops_at_its_bound_and_says_it_stopped():
    search = invariance.search_flip(varied_bundle(), [TEXT[:4], TEXT[4:9]], OTHERS, steps_each=5, sizes=(1,),
                                    max_steps=7)
    assert search.found is None and search.stopped and search.steps == 7 and search.texts == 2


def test_a_search_finds_a_flip_when_the_shared_pass_moves_a_near_tie():
    """A shared pass that moves the second token up by more than the gap must be reported as a flip."""
    bundle = varied_bundle()

    def swapping(bundle_, caches, tokens):
        logits, ms = batched_decode(bundle_, caches, tokens)
        row = logits[0].clone()
        top2 = torch.topk(row, 2)
        if float(top2.values[0] - top2.values[1]) < 0.5:  # a near-tie for this test's purpose
            row[top2.indices[1]] = top2.values[0] + 1e-3
        return [row] + list(logits[1:]), ms

    search = invariance.search_flip(bundle, [TEXT[:4], TEXT[4:9], TEXT[2:5], TEXT[6:]], OTHERS, steps_each=12,
                                    sizes=(2,), max_steps=200, batched=swapping)
    assert search.found is not None, search
    flip = search.found
    assert flip.rows == 2 and flip.batched_top != flip.solo_top and flip.gap < 0.5
    assert search.steps >= 1 and search.passes == search.steps


@pytest.mark.integration
def test_on_the_embedded_model_a_shared_pass_is_within_the_benchs_tolerance(embedded):
    from bench.batch_exactness import TOLERANCE

    def ids(text):
        return list(embedded.tokenizer(text)["input_ids"])
    others = [ids(t) for t in ("Hi there", "Water boils at", "def fibonacci(n):", "Once upon a time, a small robot")]
    found = invariance.step_invariance(embedded, ids("The capital of France is Paris, and"), others, sizes=(2, 4))
    assert [s.rows for s in found.sizes] == [2, 4]
    assert 0 <= found.max_delta < TOLERANCE and found.gap > 0


def test_the_step_keeps_its_solo_top_logit():
    bundle = varied_bundle()
    found = invariance.step_invariance(bundle, TEXT, OTHERS, sizes=(2,))
    from autoreg_core.engine import decode

    cache = decode.new_cache(bundle)
    decode.forward(bundle, TEXT[:-1], cache)
    solo = decode.forward(bundle, [TEXT[-1:]], cache).logits[0]
    assert found.top_logit == pytest.approx(float(solo.max()), abs=1e-6)


def test_significant_bits_and_the_spacing_of_neighbouring_floats():
    assert [invariance.significant_bits(d) for d in (torch.float32, torch.bfloat16, torch.float16)] == [24, 8, 11]
    for value in (20.0, -20.0, 16.0, 15.5, 0.75, 1024.0):  # each exact in all three types
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            x = torch.tensor(abs(value), dtype=dtype)
            up = torch.nextafter(x, torch.tensor(float("inf"), dtype=dtype)) - x
            assert invariance.float_spacing(value, dtype) == float(up), (value, dtype)
    assert invariance.float_spacing(16.0, torch.bfloat16) == 0.125 and invariance.float_spacing(15.99, torch.bfloat16) \
        == 0.0625
