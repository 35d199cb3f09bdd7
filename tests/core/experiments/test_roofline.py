"""Batching: one decode step for B rows on a repeated cache; its bytes; the sweep's bookkeeping."""
from __future__ import annotations

import math

import pytest
import torch

from autoreg_core.engine import decode
from autoreg_core.engine.kv_cache import measured_bytes
from autoreg_core.experiments import roofline as batching

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("bad", [0, -1, 33, 2.5])
def test_batch_sizes_are_bounded(bad):
    with pytest.raises(ValueError, match="from 1 to 32"):
        batching.check_batch(bad)


def test_batch_sizes_end_on_the_largest():
    assert batching.batch_sizes(32) == [1, 2, 4, 8, 12, 16, 24, 32]
    assert batching.batch_sizes(10) == [1, 2, 4, 8, 10]
    assert batching.batch_sizes(1) == [1]


def test_context_ids_repeat_the_text_to_the_length(tiny):
    ids = batching.context_ids(tiny, "The cat sat.", 40)
    once = tiny.tokenizer("The cat sat.", add_special_tokens=False)["input_ids"]
    assert len(ids) == 40
    assert ids == (once * 40)[:40]
    with pytest.raises(ValueError, match="1 to 255"):
        batching.context_ids(tiny, "The cat sat.", 300)


def test_repeated_cache_rows_compute_exactly_the_single_row(tiny):
    ids = batching.context_ids(tiny, "Once upon a time there was a village", 24)
    prefix = decode.new_cache(tiny)
    one = decode.forward(tiny, [ids], prefix)
    token = int(torch.argmax(one.logits[0]))
    cache = batching.batched_cache(tiny, prefix, 8)
    assert measured_bytes(cache) == tiny.spec.cache_bytes(24, 8)
    assert prefix.get_seq_length() == 24  # the one-row cache was copied, not grown
    step = decode.forward(tiny, torch.full((8, 1), token), cache)
    alone = decode.forward(tiny, [[token]], decode.copy_cache(prefix, tiny))
    assert step.logits.shape == (8, tiny.spec.vocab)
    assert torch.allclose(step.logits, alone.logits.expand(8, -1), atol=1e-5)


def test_time_step_leaves_the_cache_at_its_length(tiny):
    ids = batching.context_ids(tiny, "A bird flew over the house.", 16)
    prefix = decode.new_cache(tiny)
    decode.forward(tiny, [ids], prefix)
    cache = batching.batched_cache(tiny, prefix, 4)
    fastest = batching.time_step(tiny, cache, 4, 5, repeats=3)
    assert isinstance(fastest, float) and fastest > 0
    assert cache.get_seq_length() == 16
    assert measured_bytes(cache) == tiny.spec.cache_bytes(16, 4)


def test_step_bytes_are_the_weights_once_plus_every_row_of_cache(tiny):
    spec = tiny.spec
    for batch in (1, 4, 32):
        read = spec.step_bytes(64, batch)
        assert read["weights"] == spec.weight_bytes_per_step
        assert read["cache"] == batch * spec.cache_bytes(64, 1)
        assert read["total"] == read["weights"] + read["cache"]


def test_ridge_batch_is_where_flops_take_as_long_as_bytes(tiny):
    spec, bandwidth, peak = tiny.spec, 10e9, 50e9
    ridge = batching.ridge_batch(spec, 64, bandwidth, peak)
    bytes_s = (spec.weight_bytes_per_step + ridge * spec.cache_bytes(64, 1)) / bandwidth
    assert math.isclose(ridge * spec.flops_step(64, True) / peak, bytes_s)
    below, above = math.floor(ridge), math.ceil(ridge)
    assert batching.compute_ms(spec, below, 64, peak) < batching.floor_ms(spec, below, 64, bandwidth)
    assert batching.compute_ms(spec, above, 64, peak) > batching.floor_ms(spec, above, 64, bandwidth)
    assert batching.ridge_batch(spec, 64, bandwidth, 1e30) == math.inf  # arithmetic never catches up


def test_sweep_measures_every_size_in_order_and_can_stop(tiny):
    ids = batching.context_ids(tiny, "The dog sat on the log.", 12)
    seen = []
    result = batching.sweep(tiny, ids, [1, 2, 4], repeats=1, on_point=lambda s: seen.append(len(s.points)))
    assert [p.batch for p in result.points] == [1, 2, 4]
    assert seen == [1, 2, 3]
    assert not result.stopped_early
    assert all(p.context == 12 and p.repeats == 1 for p in result.points)
    assert result.points[2].tokens_per_s == pytest.approx(4 / result.points[2].step_ms * 1000)
    stopped = batching.sweep(tiny, ids, [1, 2, 4], repeats=1, should_stop=lambda: True)
    assert stopped.points == [] and stopped.stopped_early


def test_nearly_free_until_reads_the_curve():
    sweep = batching.BatchSweep("m", 64, [1, 4, 8, 16], [batching.BatchPoint(1, 64, 30.0, 1),
                                                          batching.BatchPoint(4, 64, 40.0, 1),
                                                          batching.BatchPoint(8, 64, 59.0, 1),
                                                          batching.BatchPoint(16, 64, 90.0, 1)])
    assert sweep.nearly_free_until() == 8
    assert sweep.nearly_free_until(slack=1.2) == 1
    assert batching.BatchSweep("m", 64, [2], [batching.BatchPoint(2, 64, 5.0, 1)]).nearly_free_until() is None


def test_the_roofline_is_written_once(tiny):
    spec = tiny.spec
    budget = batching.step_budget(spec, 4, 64, bandwidth=2e9, peak_flops=3e10)
    assert budget.bytes_read == spec.step_bytes(64, 4)["total"] == spec.weight_bytes_per_step + spec.cache_bytes(64, 4)
    assert budget.memory_ms == batching.floor_ms(spec, 4, 64, 2e9)
    assert budget.compute_ms == batching.compute_ms(spec, 4, 64, 3e10) == 4 * spec.flops_step(64, True) / 3e10 * 1000
    assert budget.ridge == 15.0 and budget.intensity == budget.flops / budget.bytes_read
