"""This machine's own yardstick: one decode step of a prompt alone, the reference the class's figures are read
against (so a goal holds on a slow machine as on a fast one)."""
from __future__ import annotations

import statistics
import time


def solo_decode_step_ms(bundle, prompt: str, config, steps: int = 20, warmup: int = 3) -> float:
    """Median wall time of one decode step of ``prompt`` alone: a solo pass (no batcher), nothing else sharing this
    process, with the caller's torch threads. A text that stops is reset and stepped on."""
    from autoreg_core import Session

    session = Session(bundle, prompt)
    session.prefill()
    times = []
    for i in range(warmup + steps):
        if session.records and session.records[-1].stop is not None:
            session.reset()
        t0 = time.perf_counter()
        session.step(config)
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)
