"""The soak: a class of students working for a long time, and whether the server's memory keeps growing.

    python -m bench.soak                        # 30 students, each resets every 40 tokens, 20 minutes
    python -m bench.soak --students 5 --minutes 2 --warmup 30
    python -m bench.soak --students 15 --minutes 7 --leak /tmp/leak   # what grows: the leak probe inside

The goal (``bench.lib.goals``): 30 students who reset every 40 tokens for 20 minutes, the server's memory slope
after the warm-up within ±2 MiB per minute. A leak (a session, a record, a cache entry or a figure kept per click)
shows as a slope; what the students legitimately hold (each one's text, at most 40 tokens) stops growing once every
student has reached 40 tokens and reset once.

Each student is a simulated tab (``bench.lib.students``: the step page over the websocket, its own seed) acting
every ``--period`` seconds, with one rule of its own: Next token until its text holds ``--reset-every``
tokens, then Reset. The server it starts is sampled every ``--every`` seconds; each sample is printed to stderr
as it comes, and the JSON at the end holds them all, the least-squares slope after the warm-up (MiB/min) and
the goal's verdict. The slope's arithmetic is ``bench.lib.stats.slope_after_warmup`` (pure, unit-tested).
With ``--leak DIR`` the server carries the leak probe (``bench.lib.in_server.leak_probe``), one JSON line a minute
in ``DIR/leak.jsonl`` (``python -m bench.leak DIR`` summarises it); ``--leak-frames 0`` leaves tracemalloc off (it
slows the server).

Bounded and local: 127.0.0.1 only, at most 25 minutes, and the server it starts is stopped.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

from bench.lib.client import warm_up
from bench.lib.goals import SOAK_MINUTES, SOAK_RESET_EVERY, SOAK_SLOPE_MIB_PER_MIN, SOAK_STUDENTS, slope_within_goal
from bench.lib.server_hooks import leak_probe_env
from bench.lib.servers import ROOT, free_port, local_url, start_server, stop_server
from bench.lib.stats import latency, slope_after_warmup, slope_error
from bench.lib.students import NEXT, RESET, Student, run_student

MAX_MINUTES = 25


class SoakStudent(Student):
    """A student who presses Next token until the text holds ``reset_every`` tokens, then Reset."""

    reset_every: int = SOAK_RESET_EVERY
    first_reset: int | None = None  # the first cycle's length (``stagger``), then every ``reset_every`` tokens

    def next_kind(self, n_tokens: int, max_new: int) -> str:
        due = self.reset_every if self.first_reset is None else self.first_reset
        if n_tokens >= min(due, max_new - 1):
            self.first_reset = None
            return RESET
        return NEXT


def stagger(index: int, n_students: int, reset_every: int) -> int:
    """Student ``index``'s first cycle: 1..``reset_every`` tokens, spread evenly over the class.

    Why: students who all arrive within seconds and reset every 40 tokens reset nearly together, so the class's
    texts (the legitimate memory, several MiB per student) grow and drop as one saw-tooth of ±100 MiB that a
    20-minute slope cannot see past (standard error ~2 MiB/min). Spread, the class holds about the same total at
    any moment, as a real class out of step does; each student still resets every ``reset_every`` tokens after.
    """
    return max(1, round(reset_every * (index + 1) / n_students))


async def sample_memory(pid: int, started: float, stop: asyncio.Event, every: float, out: list) -> None:
    """The server's resident memory every ``every`` seconds, printed as it comes (a long run shows its trend)."""
    import psutil

    proc = psutil.Process(pid)
    while True:
        try:
            sample = (round(time.perf_counter() - started, 1), round(proc.memory_info().rss / 2**20, 1))
        except psutil.Error:
            return
        out.append(sample)
        print(f"soak: {sample[0]:7.1f} s  {sample[1]:8.1f} MiB", file=sys.stderr, flush=True)
        try:
            await asyncio.wait_for(stop.wait(), every)
            return
        except TimeoutError:
            pass


async def soak(url: str, pid: int, n_students: int, seconds: float, period: float, jitter: float,
               reset_every: int, every: float, seed: int, spread: bool = True) -> tuple[list[Student], list]:
    await warm_up(url)
    rng = random.Random(seed)
    students = []
    for i in range(n_students):
        student = SoakStudent(i, 1000 + i, url, random.Random(rng.random()))
        student.reset_every = reset_every
        student.first_reset = stagger(i, n_students, reset_every) if spread else None
        students.append(student)
    started = time.perf_counter()
    stop_at = started + seconds
    samples: list = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_memory(pid, started, stop, every, samples))

    async def arrive(student: Student) -> None:
        await asyncio.sleep(min(10.0, seconds / 4) * student.index / max(1, n_students))
        await run_student(student, started, stop_at, period, jitter)

    await asyncio.gather(*(arrive(s) for s in students))
    stop.set()
    await sampler
    return students, samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=SOAK_STUDENTS)
    parser.add_argument("--minutes", type=float, default=SOAK_MINUTES)
    parser.add_argument("--reset-every", type=int, default=SOAK_RESET_EVERY, help="tokens before a student resets")
    parser.add_argument("--warmup", type=float, default=300.0, help="seconds before memory should be flat")
    parser.add_argument("--period", type=float, default=2.0, help="seconds between a student's actions")
    parser.add_argument("--jitter", type=float, default=0.5)
    parser.add_argument("--every", type=float, default=15.0, help="seconds between memory samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--in-step", action="store_true",
                        help="every student's first cycle is full length (they reset nearly together; see stagger)")
    parser.add_argument("--leak", type=Path, default=None,
                        help="folder for the leak probe inside the server (tracemalloc, gc, sessions); "
                             "python -m bench.leak reads it")
    parser.add_argument("--leak-every", type=float, default=60.0, help="seconds between the probe's lines")
    parser.add_argument("--leak-frames", type=int, default=8,
                        help="tracemalloc's frames per allocation (0: no tracemalloc, the cheap probe)")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200:
        parser.error("--students must lie between 1 and 200")
    if not 0 < args.minutes <= MAX_MINUTES:
        parser.error(f"--minutes must lie between 0 and {MAX_MINUTES}")
    if not 0 <= args.warmup < args.minutes * 60:
        parser.error("--warmup must be shorter than the run")
    load = tuple(round(x, 2) for x in os.getloadavg())
    env = leak_probe_env(args.leak, args.leak_every, args.leak_frames) if args.leak else None
    server = start_server(ROOT / "app.py", free_port(), env=env)
    try:
        students, samples = asyncio.run(soak(local_url(server), server.pid, args.students, args.minutes * 60,
                                             args.period, args.jitter, args.reset_every, args.every, args.seed,
                                             not args.in_step))
    finally:
        stop_server(server)
    actions = [a for s in students for a in s.actions]
    errors = [a.error for a in actions if a.error] + [e for s in students for e in s.errors]
    slope, error = slope_after_warmup(samples, args.warmup), slope_error(samples, args.warmup)
    print(json.dumps({
        "students": args.students, "minutes": args.minutes, "reset_every_tokens": args.reset_every,
        "first_cycles": "full length (in step)" if args.in_step else "staggered 1..reset_every tokens",
        "actions_served": sum(1 for a in actions if a.error is None),
        "resets": sum(1 for a in actions if a.kind == RESET and a.error is None),
        "response_time": latency([a.seconds for a in actions if a.error is None]),
        "errors": len(errors), "error_examples": errors[:5],
        "memory_samples_s_mib": samples, "warmup_s": args.warmup,
        "after_warmup_first_last_mib": [m for t, m in samples if t >= args.warmup][:1]
        + [m for t, m in samples if t >= args.warmup][-1:],
        "slope_after_warmup_mib_per_min": None if slope is None else round(slope, 2),
        "slope_standard_error_mib_per_min": None if error is None else round(error, 2),
        "goal": f"{SOAK_STUDENTS} students resetting every {SOAK_RESET_EVERY} tokens for {SOAK_MINUTES} min: "
                f"slope within ±{SOAK_SLOPE_MIB_PER_MIN} MiB/min",
        "within_goal": slope_within_goal(slope),
        "load_average_at_start": load, "load_average_at_end": tuple(round(x, 2) for x in os.getloadavg()),
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
