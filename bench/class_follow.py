"""A class following its teacher, over the websocket: how soon each follower's page shows the teacher's step.

    python -m bench.class_follow                         # 30 followers, the teacher steps every 3 s for 3 min
    python -m bench.class_follow --students 5 --seconds 30

It starts a server (its own class file), makes a class in that file and seats the students (the join form
is the browser tests' part), then opens one teacher tab on the step page and one tab per student on the
Class page, each what a browser tab is to the server: it sends the page's requests, reruns the polling
fragment every ``run_every`` seconds as the browser does, and keeps its address as the app rewrites it.

First the followers only poll for ``--idle`` seconds (the cost of a class sitting still). Then the teacher
presses Next token every ``--period`` seconds. For every step, every follower's delay is measured from the
teacher's click to the moment that follower's page holds a token strip with the new token, and the strip
must equal the teacher's (whole sequence and length).

Printed as JSON: the delays (p50/p95/max), steps and updates counted, strips that differed, errors, and the
server's CPU: per second while idle polling, and per follower update once the polling is taken out.
Bounded and local: 127.0.0.1 only, at most 15 minutes, and the server it starts is stopped.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.classroom import AppClient, latency  # noqa: E402
from bench.server import cpu_seconds, free_port, local_url, start_server, stop_server  # noqa: E402

MAX_SECONDS = 900
PROMPT = "The capital of France is"
CLASS_PAGE, STEP_PAGE = "class", "step"


@dataclass
class Follower:
    index: int
    seat: str
    client: AppClient
    seen: list[int] = field(default_factory=list)  # the strip's generated token ids as last drawn
    updates: list[tuple[float, list[int]]] = field(default_factory=list)  # (when, generated ids) per new strip
    errors: list[str] = field(default_factory=list)
    polls: int = 0


async def follow(f: Follower, stop: asyncio.Event) -> None:
    """Poll as the browser does; note each strip that differs from the one drawn before."""
    while not stop.is_set():
        if f.client.auto_rerun is None:
            f.errors.append("the Class page set no polling fragment")
            return
        try:
            await asyncio.wait_for(stop.wait(), f.client.auto_rerun[0])
            return
        except TimeoutError:
            pass
        try:
            result = await f.client.poll()
        except Exception as exc:  # noqa: BLE001 - a failed poll is a finding
            f.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            return
        f.polls += 1
        f.errors += result.exceptions
        if result.tokens is not None and result.tokens != f.seen:
            f.seen = result.tokens
            f.updates.append((time.perf_counter(), list(result.tokens)))


async def run(url: str, db: Path, n_students: int, seconds: float, period: float, idle_s: float,
              pid: int | None) -> dict:
    from autoreg_ui.classroom.store import ClassStore

    store = ClassStore(db)
    code, key = store.create()
    seats = [store.join(code, f"s{i}", source=f"bench-{i}") for i in range(n_students)]
    teacher = AppClient(url, STEP_PAGE, urllib.parse.urlencode({"prompt": PROMPT, "cfg_temperature": "0",
                                                                "class": code, "key": key}))
    await teacher.connect()
    opened = await teacher.open()
    errors = list(opened.exceptions)
    followers = [Follower(i, seat, AppClient(url, CLASS_PAGE, urllib.parse.urlencode({"class": code, "seat": seat})))
                 for i, seat in enumerate(seats)]
    for f in followers:
        await f.client.connect()
        first = await f.client.open()
        f.errors += first.exceptions
        f.seen = first.tokens or []
    stop = asyncio.Event()
    tasks = [asyncio.create_task(follow(f, stop)) for f in followers]

    cpu0, t0 = (cpu_seconds(pid) if pid else None), time.perf_counter()
    await asyncio.sleep(idle_s)  # the class sits still: polling only
    cpu_idle, idle_elapsed = ((cpu_seconds(pid) - cpu0) if pid else None), time.perf_counter() - t0
    polls_idle = sum(f.polls for f in followers)

    steps: list[tuple[float, list[int]]] = []  # (click time, the teacher's generated ids after it)
    cpu1, t1 = (cpu_seconds(pid) if pid else None), time.perf_counter()
    stop_at = t1 + seconds
    shown = opened.tokens or []
    while time.perf_counter() < stop_at:
        clicked = time.perf_counter()
        result = await teacher.press("step_next")
        errors += result.exceptions
        if result.tokens is not None and result.tokens == shown:  # the text has stopped (EOS, max new tokens)
            clicked = time.perf_counter()
            result = await teacher.press("step_reset")  # back to the prompt: a change the class must see too
            errors += result.exceptions
        if result.tokens is not None and result.tokens != shown:
            steps.append((clicked, list(result.tokens)))
            shown = result.tokens
        await asyncio.sleep(max(0.0, clicked + period - time.perf_counter()))
    await asyncio.sleep(3.0)  # the last step reaches everyone
    stop.set()
    await asyncio.gather(*tasks)
    cpu_steps, steps_elapsed = ((cpu_seconds(pid) - cpu1) if pid else None), time.perf_counter() - t1
    for c in [teacher] + [f.client for f in followers]:
        await c.close()
    return report(steps, followers, errors, cpu_idle, idle_elapsed, polls_idle, cpu_steps, steps_elapsed)


def report(steps, followers, errors, cpu_idle, idle_s, polls_idle, cpu_steps, steps_s) -> dict:
    """Each teacher change's delay to each follower: the first strip after the click equal to the teacher's
    (whole sequence and length). A follower whose next strip after the click was another one (it skipped
    this change, or showed other tokens) counts as not equal, with that strip's delay; none at all, missed."""
    delays, wrong, missed = [], 0, 0
    for n, (clicked, ids) in enumerate(steps):
        until = steps[n + 1][0] if n + 1 < len(steps) else float("inf")
        for f in followers:
            after = [(t, seen) for t, seen in f.updates if t >= clicked]
            if not after:
                missed += 1
                continue
            hit = next(((t, seen) for t, seen in after if seen == ids and t < until), None)
            if hit is None:
                wrong += 1
                hit = after[0]
            delays.append(hit[0] - clicked)
    updates = len(delays)
    poll_rate = cpu_idle / idle_s if cpu_idle is not None and idle_s else None
    known = cpu_steps is not None and updates and poll_rate is not None
    per_update = ((cpu_steps - poll_rate * steps_s) / updates) if known else None
    return {
        "followers": len(followers), "teacher_steps": len(steps),
        "follower_updates": updates, "missed_updates": missed, "strips_not_equal_to_the_teachers": wrong,
        "delay_click_to_follower_page": latency(delays),
        "errors": len(errors) + sum(len(f.errors) for f in followers),
        "error_examples": (errors + [e for f in followers for e in f.errors])[:5],
        "server_cpu": {
            "idle_polling_s_per_s": None if poll_rate is None else round(poll_rate, 3),
            "polls_while_idle": polls_idle, "idle_seconds": round(idle_s, 1),
            "while_stepping_s": None if cpu_steps is None else round(cpu_steps, 2),
            "stepping_seconds": round(steps_s, 1),
            "per_follower_update_ms": None if per_update is None else round(per_update * 1000, 1)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=180.0, help="how long the teacher steps")
    parser.add_argument("--period", type=float, default=3.0, help="seconds between the teacher's steps")
    parser.add_argument("--idle", type=float, default=15.0, help="seconds of polling before the first step")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200:
        parser.error("--students must lie between 1 and 200")
    if not 1 <= args.seconds + args.idle <= MAX_SECONDS:
        parser.error(f"--seconds plus --idle must lie between 1 and {MAX_SECONDS}")
    with tempfile.TemporaryDirectory(prefix="autoreg-class-bench-") as tmp:
        db = Path(tmp) / "classes.sqlite3"
        server = start_server(ROOT / "app.py", free_port(), env={"AUTOREG_CLASS_DB": str(db),
                                                                 "AUTOREG_MAX_SESSIONS": "0"})
        try:
            load = tuple(round(x, 2) for x in os.getloadavg())
            out = asyncio.run(run(local_url(server), db, args.students, args.seconds, args.period, args.idle,
                                  server.pid))
        finally:
            stop_server(server)
    out["load_average_at_start"] = load
    out["settings"] = {"period_s": args.period, "seconds": args.seconds, "idle_s": args.idle,
                       "autoreg_batch": os.environ.get("AUTOREG_BATCH", "1")}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
