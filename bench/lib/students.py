"""A simulated student: one tab on the step page that sets its own seed, then acts about every ``period`` seconds
(mostly Next token, sometimes a temperature move, an Undo or a Reset) and keeps what each action showed. The class
benches (``bench.classroom``, ``bench.soak``) run many of them at once."""
from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field

from bench.lib.client import AppClient

TEMPERATURES = (0.5, 0.7, 0.9, 1.1)
NEXT, UNDO, RESET, SLIDER, OPEN = "next token", "undo", "reset", "temperature slider", "open"
BUTTONS = {NEXT: "step_next", UNDO: "step_undo", RESET: "step_reset"}  # the step page's widget keys


@dataclass
class Action:
    kind: str
    seconds: float
    at: float  # seconds since the class started
    tokens: list[int] | None  # what the strip showed afterwards
    value: float | None = None  # the temperature, for a slider move
    error: str | None = None


@dataclass
class Student:
    index: int
    seed: int
    url: str
    rng: random.Random
    actions: list[Action] = field(default_factory=list)
    defaults: dict = field(default_factory=dict)  # sidebar widget defaults, by key
    refused: bool = False
    open_seconds: float | None = None
    errors: list[str] = field(default_factory=list)

    def next_kind(self, n_tokens: int, max_new: int) -> str:
        if n_tokens >= max_new - 1:
            return RESET
        roll = self.rng.random()
        if roll < 0.08:
            return SLIDER
        if roll < 0.16 and n_tokens:
            return UNDO
        if roll < 0.20:
            return RESET
        return NEXT


async def run_student(student: Student, started: float, stop_at: float, period: float, jitter: float) -> None:
    """Open the page, set this student's seed, then act every ``period`` ± ``jitter`` s until ``stop_at``."""
    from autoreg_ui import keys

    client = AppClient(student.url)
    try:
        await client.connect()
        opened = await client.open()
        student.open_seconds = opened.seconds
        if opened.full:
            student.refused = True
            return
        if opened.exceptions:
            student.errors += opened.exceptions
        student.defaults = {k: w.default for k, w in client.widgets.items()}
        seeded = await client.set_value(keys.CFG_SEED, student.seed)
        student.errors += seeded.exceptions
        tokens = seeded.tokens or []
        max_new = int(student.defaults.get(keys.CFG_MAX_NEW) or 64)
        next_at = time.perf_counter() + student.rng.uniform(0, period)
        while True:
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            if time.perf_counter() >= stop_at:
                break
            kind = student.next_kind(len(tokens), max_new)
            value = None
            try:
                if kind == SLIDER:
                    value = student.rng.choice(TEMPERATURES)
                    result = await client.set_value(keys.CFG_TEMPERATURE, value)
                else:
                    result = await client.press(BUTTONS[kind])
                error = "; ".join(result.exceptions) or None
                if result.tokens is not None:
                    tokens = result.tokens
                elif error is None:
                    error = "no token strip in the response"
                student.actions.append(Action(kind, result.seconds, time.perf_counter() - started,
                                              list(tokens), value, error))
            except Exception as exc:  # noqa: BLE001 - a failed action is a finding, counted as an error
                student.actions.append(Action(kind, float("nan"), time.perf_counter() - started, None, value,
                                              f"{type(exc).__name__}: {exc}"[:300]))
                break
            next_at += period + student.rng.uniform(-jitter, jitter)
            next_at = max(next_at, time.perf_counter())
    except Exception as exc:  # noqa: BLE001
        student.errors.append(f"{type(exc).__name__}: {exc}"[:300])
    finally:
        await client.close()
