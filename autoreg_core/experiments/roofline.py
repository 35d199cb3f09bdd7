"""Batching: one read of the weights serves every sequence in the batch.

A decode step for one sequence streams every weight from memory to do a few FLOPs per byte, so
the processor mostly waits. Put B sequences in the batch and the same weight read does B times
the work: the step gets only a little slower while B times as many tokens come out. What does
grow with B is each row's own KV cache (read on top of the weights) and, eventually, the
arithmetic. This module measures decode-step time against the batch size on the loaded model and
gives the bytes-read account to draw next to it (the counts come from ``ModelSpec``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.engine.timing import fastest_ms

MAX_BATCH = 32
BATCH_SIZES = (1, 2, 4, 8, 12, 16, 24, 32)
DEFAULT_CONTEXT = 64  # cached positions per row while a step is timed
FREE_SLACK = 2.0  # a batch is "nearly free" while its step takes less than this many single-row steps


def check_batch(batch: int) -> int:
    """A batch size the page may ask for (1 to ``MAX_BATCH``), or a ValueError that says so."""
    if int(batch) != batch or not 1 <= batch <= MAX_BATCH:
        raise ValueError(f"The batch size must be a whole number from 1 to {MAX_BATCH}; got {batch!r}.")
    return int(batch)


def batch_sizes(largest: int) -> list[int]:
    """The sizes a sweep measures, up to ``largest`` (always ending on it)."""
    largest = check_batch(largest)
    return sorted({b for b in BATCH_SIZES if b < largest} | {largest})


def context_ids(bundle, text: str, length: int = DEFAULT_CONTEXT) -> list[int]:
    """``length`` token ids from ``text`` (repeated when it is shorter), for a context of known size."""
    ids = list(bundle.tokenizer(text, add_special_tokens=False)["input_ids"])
    if not ids:
        raise ValueError("The context text gives no tokens.")
    if not 1 <= length <= bundle.spec.max_positions - 1:
        raise ValueError(f"The context must hold 1 to {bundle.spec.max_positions - 1} tokens; got {length}.")
    return (ids * (length // len(ids) + 1))[:length]


# ---------------------------------------------------------------- bytes and FLOPs of one batched step
@dataclass(frozen=True)
class StepBudget:
    """One decode step of ``batch`` rows at length L against the machine's two roofs: the roofline,
    written once (the cost page's decode step is batch 1; the serving page's curve every batch)."""

    batch: int
    L: int
    weight_bytes: int
    cache_bytes: int
    flops: int
    bandwidth: float  # bytes/s, read + write of a large copy
    peak_flops: float  # FLOP/s of a dense matmul

    @property
    def bytes_read(self) -> int:
        return self.weight_bytes + self.cache_bytes

    @property
    def intensity(self) -> float:
        """FLOPs per byte read; below the ridge the step is memory-bound."""
        return self.flops / self.bytes_read

    @property
    def ridge(self) -> float:
        """The machine's ridge point: peak FLOP/s ÷ bandwidth, in FLOP/byte."""
        return self.peak_flops / self.bandwidth

    @property
    def memory_ms(self) -> float:
        """The fastest the step could be if only its bytes mattered (bytes ÷ bandwidth)."""
        return self.bytes_read / self.bandwidth * 1000.0

    @property
    def compute_ms(self) -> float:
        """The fastest the step could be if only its FLOPs mattered (FLOPs ÷ peak)."""
        return self.flops / self.peak_flops * 1000.0


def step_budget(spec: ModelSpec, batch: int, context: int, bandwidth: float = math.inf,
                peak_flops: float = math.inf) -> StepBudget:
    read = spec.step_bytes(context, batch)
    return StepBudget(batch, context, read["weights"], read["cache"], batch * spec.flops_step(context, True),
                      bandwidth, peak_flops)


def floor_ms(spec: ModelSpec, batch: int, context: int, bandwidth: float) -> float:
    """The fastest a batched step could be if only its bytes mattered (bytes ÷ bandwidth)."""
    return step_budget(spec, batch, context, bandwidth=bandwidth).memory_ms


def compute_ms(spec: ModelSpec, batch: int, context: int, peak_flops: float) -> float:
    """The fastest a batched step could be if only its FLOPs mattered (B × FLOPs of one row ÷ peak)."""
    return step_budget(spec, batch, context, peak_flops=peak_flops).compute_ms


def ridge_batch(spec: ModelSpec, context: int, bandwidth: float, peak_flops: float) -> float:
    """The batch size at which the arithmetic takes as long as the bytes: beyond it a step is
    compute-bound and each extra row costs its full share of FLOPs (inf if that never happens)."""
    per_row = spec.flops_step(context, True) / peak_flops - spec.cache_bytes(context, 1) / bandwidth
    if per_row <= 0:
        return math.inf
    return spec.weight_bytes_per_step / bandwidth / per_row


# ---------------------------------------------------------------- measuring
@dataclass(frozen=True)
class BatchPoint:
    """One batch size, measured: the fastest of a few decode steps (other work only adds time)."""

    batch: int
    context: int
    step_ms: float
    repeats: int

    @property
    def tokens_per_s(self) -> float:
        """Every row gets one token per step."""
        return self.batch / self.step_ms * 1000.0


@dataclass
class BatchSweep:
    """Decode-step times against the batch size, in the order measured."""

    model: str
    context: int
    sizes: list[int]
    points: list[BatchPoint] = field(default_factory=list)
    stopped_early: bool = False

    def point(self, batch: int) -> BatchPoint | None:
        return next((p for p in self.points if p.batch == batch), None)

    def nearly_free_until(self, slack: float = FREE_SLACK) -> int | None:
        """The largest measured batch whose step still takes less than ``slack`` single-row steps."""
        one = self.point(1)
        if one is None:
            return None
        return max(p.batch for p in self.points if p.step_ms < slack * one.step_ms)


def batched_cache(bundle, prefix_cache, batch: int):
    """A copy of a one-row cache repeated into ``batch`` identical rows (transformers' own repeat)."""
    cache = decode.copy_cache(prefix_cache, bundle)
    cache.batch_repeat_interleave(check_batch(batch))
    return cache


def time_step(bundle, cache, batch: int, token_id: int, repeats: int) -> float:
    """Fastest ms of ``repeats`` decode steps of ``batch`` rows on ``cache``; the cache is cut back after
    each step, so every repeat reads the same number of positions."""
    tokens = torch.full((batch, 1), int(token_id), dtype=torch.long)

    def one() -> float:
        ms = decode.forward(bundle, tokens, cache).ms
        cache.crop(-1)
        return ms

    return fastest_ms(one, repeats)[0]


def sweep(bundle, ids: list[int], sizes: list[int], *, repeats: int = 3,
          on_point: Callable[[BatchSweep], None] | None = None,
          should_stop: Callable[[], bool] | None = None) -> BatchSweep:
    """Time one decode step at every batch size in ``sizes`` over a context of ``ids``.

    The prompt is prefilled once; each size gets a copy of its cache repeated into B rows, one
    warm-up step, then the fastest of ``repeats`` steps. ``on_point`` sees the sweep after each
    size (a page keeps it, so a Stop keeps what was measured).
    """
    for batch in sizes:
        check_batch(batch)
    prefix = decode.new_cache(bundle)
    fwd = decode.forward(bundle, [ids], prefix)
    token = int(torch.argmax(fwd.logits[0]))
    result = BatchSweep(bundle.name, len(ids), list(sizes))
    for batch in sizes:
        if should_stop is not None and should_stop():
            result.stopped_early = True
            break
        cache = batched_cache(bundle, prefix, batch)
        time_step(bundle, cache, batch, token, 1)  # warm-up: first call at a new shape
        result.points.append(BatchPoint(batch, len(ids), time_step(bundle, cache, batch, token, repeats), repeats))
        del cache
        if on_point is not None:
            on_point(result)
    return result

