"""Timing in one place: wait for the device, time one call, keep the fastest of several runs.

The fastest, not the mean: other work on a shared machine only ever adds time to a run, so the
fastest repeat is the best estimate of what the computation itself costs.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import torch

T = TypeVar("T")


def sync(device: torch.device) -> None:
    """Wait until the device has finished its queued work (CUDA runs asynchronously; the CPU does not)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_ms(fn: Callable[[], T], device: torch.device) -> tuple[T, float]:
    """Call ``fn`` once, between two syncs: its result and its wall time in ms."""
    sync(device)
    t0 = time.perf_counter()
    out = fn()
    sync(device)
    return out, (time.perf_counter() - t0) * 1000.0


def fastest_ms(run: Callable[[], float | tuple[float, ...]], min_repeats: int = 1, max_repeats: int | None = None,
               min_seconds: float = 0.0) -> tuple[float | tuple[float, ...], int]:
    """The fastest of repeated runs (``run`` returns its ms, or a tuple of ms taken together) and the count.

    Runs at least ``min_repeats`` times, then more while the total is under ``min_seconds``, up to
    ``max_repeats`` (default: ``min_repeats``). A tuple is minimised element by element.
    """
    cap = max(1, max_repeats if max_repeats is not None else min_repeats)
    times: list = []
    while len(times) < cap and (len(times) < max(1, min_repeats) or _total(times) < min_seconds * 1000.0):
        times.append(run())
    if isinstance(times[0], tuple):
        return tuple(min(column) for column in zip(*times)), len(times)
    return min(times), len(times)


def _total(times: list) -> float:
    return sum(t[0] if isinstance(t, tuple) else t for t in times)
