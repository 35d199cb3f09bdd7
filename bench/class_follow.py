"""A class following its teacher: how soon each follower receives the teacher's step from the class's feed.

    python -m bench.class_follow                           # 30 followers, the teacher steps every 3 s for 3 min
    python -m bench.class_follow --students 1000 --seconds 120 --period 3     # the lecture hall

It starts a server (its own class file; or uses one already running, ``--url``), makes a class in that file
and seats the students (the join form is the browser tests' part), then opens one teacher tab on the step page
(what a browser tab is to the server: it sends the page's requests over the websocket) and, per student, the
class's feed (``/api/class/CODE/feed``, server-sent events), as light clients in this one process
(``bench.lib.sse``), counted apart from the server. A real follower's page also holds its Streamlit websocket
and session: the memory and CPU per follower here are the feed's alone.

Three phases: the teacher steps alone (``--alone`` steps: the teacher's own cost per step, with nobody
listening); the followers connect (the server's memory before and after, per follower) and sit still for
``--idle`` seconds (the cost of open streams); then the teacher presses Next token every ``--period`` seconds.
For every step, every follower's delay is measured from the teacher's click to the event that holds the new
text, and the generated token ids in it must equal the teacher's (whole sequence and length).

Printed as JSON: the delays (p50/p95/max), steps and updates counted, texts that differed, errors, the server's
CPU per follower update (what stepping cost beyond the teacher's own steps and the idle streams, divided by the
updates), its memory per follower, the machine's solo decode step, and the goals' verdicts. Bounded and local:
the servers it starts listen on 127.0.0.1 only, it runs at most 15 minutes, and they are stopped.

Across replicas (the goal: 120 followers in one class across 2 replicas plus PostgreSQL, every teacher step
reaching every follower with the same text, follow delay p95 at most 0.5 s):

    python -m bench.class_follow --replicas 2 --class-db postgres --students 120 --seconds 120

starts a throwaway PostgreSQL (``bench.lib.postgres``), ``--replicas`` servers on it, the teacher's tab on the
first and the followers dealt round-robin over all of them (as the balancer's cookie would pin them), and adds
the delays per replica.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from bench.lib import postgres, sse
from bench.lib.client import AppClient
from bench.lib.goals import HALL_CPU_MS, HALL_FOLLOWERS, HALL_P95_S, LECTURE_FOLLOWERS, LECTURE_P95_S
from bench.lib.profiles import profile_by_run_kind
from bench.lib.reference import solo_decode_step_ms
from bench.lib.server_hooks import run_kind_profiler_env
from bench.lib.servers import ROOT, cpu_seconds, free_port, local_url, start_server, stop_server
from bench.lib.stats import latency

MAX_SECONDS = 900
MAX_STUDENTS = 2000
ARRIVING_TOGETHER = 50  # followers opening their stream at once
PROMPT = "The capital of France is"
STEP_PAGE = "step"
FEED = "/api/class/{code}/feed?seat={seat}"


@dataclass
class Follower:
    index: int
    seat: str
    url: str = ""  # the feed's address on this follower's server
    seen: list[int] | None = None  # the generated token ids of the last edition received
    updates: list[tuple[float, list[int]]] = field(default_factory=list)  # (when, generated ids) per new text
    errors: list[str] = field(default_factory=list)
    events: int = 0
    replica: int = 0  # which server (index into the run's urls) serves this follower
    connected: asyncio.Event = field(default_factory=asyncio.Event)


async def listen(f: Follower, stop: asyncio.Event) -> None:
    """Hold the follower's feed open; note each edition whose text differs from the one before."""
    try:
        reader, writer = await sse.connect(f.url)
    except (OSError, TimeoutError, sse.StreamRefused, asyncio.IncompleteReadError) as exc:
        f.errors.append(f"{type(exc).__name__}: {exc}"[:300])
        f.connected.set()
        return
    f.connected.set()
    ended = asyncio.ensure_future(stop.wait())
    try:
        stream = sse.events(reader)
        while True:
            got = asyncio.ensure_future(anext(stream))
            done, _ = await asyncio.wait({got, ended}, return_when=asyncio.FIRST_COMPLETED)
            if ended in done:
                got.cancel()
                return
            event = got.result()
            when = time.perf_counter()
            f.events += 1
            ids = generated(event.data)
            if ids is None:
                f.errors.append(f"the feed ended: {event.data[:100]}")
                return
            if ids != f.seen:
                f.seen = ids
                f.updates.append((when, ids))
    except StopAsyncIteration:
        f.errors.append("the server closed the stream")
    except (OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
        f.errors.append(f"{type(exc).__name__}: {exc}"[:300])
    finally:
        ended.cancel()
        writer.close()


def generated(data: str) -> list[int] | None:
    """The teacher's generated token ids in an edition ([] before a text; None: the class ended or the seat was
    removed). Only that list is parsed: a thousand followers' whole documents would make this process, not the
    server, the slow part of the measurement."""
    at = data.find('"generated":[')
    if at < 0:
        return None if ('"ended":true' in data or '"removed":true' in data) else []
    start = at + len('"generated":')
    return json.loads(data[start:data.index("]", start) + 1])


def rss_mib(pids: list[int]) -> float | None:
    import psutil

    return sum(psutil.Process(p).memory_info().rss for p in pids) / 2**20 if pids else None


def _cpu(pids: list[int]) -> float | None:
    return sum(cpu_seconds(p) for p in pids) if pids else None


async def teacher_steps(teacher: AppClient, shown: list[int], until: float, period: float,
                        count: int | None = None) -> tuple[list[tuple[float, list[int]]], list[float], list[str],
                                                           list[int]]:
    """The teacher presses Next token every ``period`` seconds until ``until`` (or ``count`` presses); a text that
    stopped (EOS, max new tokens) is reset, a change the class must see too. Returns the steps (click time, the
    teacher's generated ids after it), each press's time to answer, errors and the text shown last."""
    steps: list[tuple[float, list[int]]] = []
    pressed: list[float] = []
    errors: list[str] = []
    while time.perf_counter() < until and (count is None or len(pressed) < count):
        clicked = time.perf_counter()
        result = await teacher.press("step_next")
        pressed.append(time.perf_counter() - clicked)
        errors += result.exceptions
        if result.tokens is not None and result.tokens == shown:  # the text has stopped
            clicked = time.perf_counter()
            result = await teacher.press("step_reset")
            errors += result.exceptions
        if result.tokens is not None and result.tokens != shown:
            steps.append((clicked, list(result.tokens)))
            shown = result.tokens
        await asyncio.sleep(max(0.0, clicked + period - time.perf_counter()))
    return steps, pressed, errors, shown


async def run(url: str | list[str], db: Path | str, n_students: int, seconds: float, period: float, idle_s: float,
              pid: int | list[int] | None, db_cpu=None, alone: int = 5) -> dict:
    """One class: the teacher on the first of ``url`` (one address, or one per replica), followers dealt over all
    of them; ``pid`` the servers' process ids (their CPU and memory are summed); ``db_cpu`` the database's CPU
    seconds so far (a callable: PostgreSQL's processes are not the servers'); ``alone`` the teacher's steps
    before anybody listens."""
    from autoreg_server.class_store import ClassStore

    urls = [url] if isinstance(url, str) else list(url)
    pids = [pid] if isinstance(pid, int) else [p for p in (pid or []) if p]
    store = ClassStore(db, max_students=max(60, n_students))
    code, key = store.create()
    seats = [store.join(code, f"s{i}", source=f"bench-{i}") for i in range(n_students)]
    store.close()
    teacher = AppClient(urls[0], STEP_PAGE, urllib.parse.urlencode({"prompt": PROMPT, "cfg_temperature": "0",
                                                                    "class": code, "key": key}))
    await teacher.connect()
    opened = await teacher.open()
    errors = list(opened.exceptions)
    shown = opened.tokens or []

    # the teacher alone: what a step costs the server with nobody listening
    cpu0 = _cpu(pids)
    lone, _, lone_errors, shown = await teacher_steps(teacher, shown, float("inf"), period, count=alone)
    errors += lone_errors
    alone_cpu_per_step = (_cpu(pids) - cpu0) / max(1, alone) if pids else None

    followers = [Follower(i, seat, urls[i % len(urls)] + FEED.format(code=code, seat=seat), replica=i % len(urls))
                 for i, seat in enumerate(seats)]
    memory_before = rss_mib(pids)
    stop = asyncio.Event()
    tasks = []
    for batch in range(0, len(followers), ARRIVING_TOGETHER):
        group = followers[batch:batch + ARRIVING_TOGETHER]
        tasks += [asyncio.create_task(listen(f, stop)) for f in group]
        await asyncio.gather(*(f.connected.wait() for f in group))
    await asyncio.sleep(1.0)  # the first edition reaches everyone
    memory_after = rss_mib(pids)

    cpu0, t0, db0 = _cpu(pids), time.perf_counter(), db_cpu() if db_cpu else None
    await asyncio.sleep(idle_s)  # the class sits still: open streams only
    cpu_idle, idle_elapsed = ((_cpu(pids) - cpu0) if pids else None), time.perf_counter() - t0
    db_idle = db_cpu() - db0 if db_cpu else None

    cpu1, t1, db1 = _cpu(pids), time.perf_counter(), db_cpu() if db_cpu else None
    steps, pressed, step_errors, shown = await teacher_steps(teacher, shown, t1 + seconds, period)
    errors += step_errors
    await asyncio.sleep(3.0)  # the last step reaches everyone
    stop.set()
    await asyncio.gather(*tasks)
    cpu_steps, steps_elapsed = ((_cpu(pids) - cpu1) if pids else None), time.perf_counter() - t1
    db_steps = db_cpu() - db1 if db_cpu else None
    await teacher.close()
    teacher_cpu = None if alone_cpu_per_step is None else alone_cpu_per_step * len(pressed)
    out = report(steps, followers, errors, cpu_idle, idle_elapsed, cpu_steps, steps_elapsed, teacher_cpu)
    out["teacher_next_token"] = latency(pressed)
    out["teacher_alone"] = {"steps": len(lone), "server_cpu_ms_per_step": None if alone_cpu_per_step is None
                            else round(alone_cpu_per_step * 1000, 1)}
    out["server_memory"] = {"before_followers_mib": _round(memory_before), "with_followers_mib": _round(memory_after),
                            "per_follower_kib": None if memory_before is None or not followers else
                            round((memory_after - memory_before) * 1024 / len(followers), 1)}
    if db_cpu:  # the database's own CPU, read the same way
        db = report(steps, followers, [], db_idle, idle_elapsed, db_steps, steps_elapsed, 0.0)["server_cpu"]
        out["database_cpu"] = {"idle_s_per_s": db["idle_streams_s_per_s"], "while_stepping_s": db["while_stepping_s"],
                               "per_follower_update_ms": db["per_follower_update_ms"]}
    return out


def raise_open_files(needed: int) -> None:
    """At least ``needed`` open files for this process and the servers it starts, within the hard limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed if hard == resource.RLIM_INFINITY else min(needed, hard),
                                                    hard))


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def report(steps, followers, errors, cpu_idle, idle_s, cpu_steps, steps_s, teacher_cpu) -> dict:
    """Each teacher change's delay to each follower: the first text after the click equal to the teacher's
    (whole sequence and length). A follower whose next text after the click was another one (it skipped this
    change, or received other tokens) counts as not equal, with that text's delay; none at all, missed.

    The server's CPU per follower update: what the stepping phase cost beyond the idle streams (``cpu_idle`` over
    ``idle_s``, for as long) and the teacher's own steps (``teacher_cpu``, measured with nobody listening),
    divided by the updates."""
    delays, wrong, missed = [], 0, 0
    by_replica: dict[int, list[float]] = {}
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
            by_replica.setdefault(f.replica, []).append(hit[0] - clicked)
    states = {tuple(ids) for _, ids in steps}
    alien = sum(1 for f in followers for t, seen in f.updates if steps and t >= steps[0][0]
                and tuple(seen) not in states)
    updates = len(delays)
    idle_rate = cpu_idle / idle_s if cpu_idle is not None and idle_s else None
    known = cpu_steps is not None and updates and idle_rate is not None and teacher_cpu is not None
    per_update = ((cpu_steps - idle_rate * steps_s - teacher_cpu) / updates) if known else None
    return {
        "followers": len(followers), "teacher_steps": len(steps),
        "follower_updates": updates, "missed_updates": missed, "texts_not_equal_to_the_teachers": wrong,
        # of those: texts that are no text the teacher ever had (the rest skipped to a later step)
        "texts_matching_no_teacher_step": alien,
        "delay_click_to_follower": latency(delays),
        "delay_per_replica": {f"r{r + 1}": latency(d) for r, d in sorted(by_replica.items())},
        "errors": len(errors) + sum(len(f.errors) for f in followers),
        "error_examples": (errors + [e for f in followers for e in f.errors])[:5],
        "server_cpu": {
            "idle_streams_s_per_s": None if idle_rate is None else round(idle_rate, 4),
            "idle_seconds": round(idle_s, 1),
            "while_stepping_s": None if cpu_steps is None else round(cpu_steps, 2),
            "teachers_own_steps_s": None if teacher_cpu is None else round(teacher_cpu, 2),
            "stepping_seconds": round(steps_s, 1),
            "per_follower_update_ms": None if per_update is None else round(per_update * 1000, 3)},
    }


def machine_step_ms(steps: int = 16) -> float:
    """The machine's own decode step: the embedded model, one tab alone, greedy, with the server's torch threads."""
    import torch

    from autoreg_core import SamplingConfig, load_model
    from autoreg_server import settings

    torch.set_num_threads(settings.current().torch_threads)
    config = SamplingConfig(temperature=0.0, max_new_tokens=steps + 1)
    return round(solo_decode_step_ms(load_model(), PROMPT, config, steps=steps, warmup=1), 1)


def on_own_servers(args) -> tuple[dict, tuple]:
    """The run on ``--replicas`` servers started here (and a throwaway PostgreSQL): the report and the load."""
    cluster = throwaway_postgres() if args.class_db == "postgres" else None
    servers = []
    try:
        with tempfile.TemporaryDirectory(prefix="autoreg-class-bench-") as tmp:
            db = cluster.dsn if cluster else Path(tmp) / "classes.sqlite3"
            for _ in range(args.replicas):
                servers.append(start_server(ROOT / "app.py", free_port(), env={
                    "AUTOREG_CLASS_DB": str(db), "AUTOREG_MAX_SESSIONS": "0",
                    "AUTOREG_CLASS_SEATS": str(max(60, args.students)),
                    **(run_kind_profiler_env(args.profile) if args.profile else {})}))
            load = tuple(round(x, 2) for x in os.getloadavg())
            out = asyncio.run(run([local_url(s) for s in servers], db, args.students, args.seconds, args.period,
                                  args.idle, [s.pid for s in servers],
                                  db_cpu=cluster.cpu_seconds if cluster else None, alone=args.alone))
    finally:
        for server in servers:
            stop_server(server)
        if cluster is not None:
            cluster.stop()
    return out, load


def throwaway_postgres() -> postgres.Cluster:
    if postgres.server_bin() is None:
        raise SystemExit(postgres.NOT_INSTALLED)
    return postgres.start_cluster()


def goal(out: dict, replicas: int, class_db: str) -> dict:
    """The goals, read off this run: every step reached every follower with the same text, and the follow delay
    p95 (and, for the hall, the server's CPU per follower update) within the goal; the lecture's across 2
    replicas on PostgreSQL, the hall's with 1,000 followers of one class on one server."""
    p95_ms = out["delay_click_to_follower"].get("p95_ms")
    p95 = None if p95_ms is None else p95_ms / 1000
    cpu_ms = out["server_cpu"].get("per_follower_update_ms")
    everyone = out["teacher_steps"] > 0 and out["missed_updates"] == 0 and out["texts_not_equal_to_the_teachers"] == 0
    clean = everyone and out["errors"] == 0
    return {"every_step_reached_every_follower_with_the_same_text": everyone,
            "this_run": f"{out['followers']} followers, {replicas} replica(s) + {class_db}",
            "lecture": {"goal": f"{LECTURE_FOLLOWERS} followers, 2 replicas + PostgreSQL, every step to every "
                                f"follower, p95 <= {LECTURE_P95_S} s",
                        "p95_within_goal": p95 is not None and p95 <= LECTURE_P95_S,
                        "met": clean and p95 is not None and p95 <= LECTURE_P95_S
                        and out["followers"] >= LECTURE_FOLLOWERS and replicas >= 2 and class_db == "postgres"},
            "hall": {"goal": f"{HALL_FOLLOWERS} followers of one class on one server, every step to every follower, "
                             f"p95 <= {HALL_P95_S} s, server CPU <= {HALL_CPU_MS} ms per follower update",
                     "p95_within_goal": p95 is not None and p95 <= HALL_P95_S,
                     "cpu_within_goal": cpu_ms is not None and cpu_ms <= HALL_CPU_MS,
                     "met": clean and p95 is not None and p95 <= HALL_P95_S and cpu_ms is not None
                     and cpu_ms <= HALL_CPU_MS and out["followers"] >= HALL_FOLLOWERS and replicas == 1}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=180.0, help="how long the teacher steps")
    parser.add_argument("--period", type=float, default=3.0, help="seconds between the teacher's steps")
    parser.add_argument("--idle", type=float, default=15.0, help="seconds of open streams before the first step")
    parser.add_argument("--alone", type=int, default=5, help="the teacher's steps before anybody listens")
    parser.add_argument("--replicas", type=int, default=1, help="servers sharing the class (1 to 4)")
    parser.add_argument("--url", help="a server already running on this machine (with --pid and --db)")
    parser.add_argument("--pid", type=int, help="that server's process id (its CPU and memory)")
    parser.add_argument("--db", help="that server's AUTOREG_CLASS_DB (the class is made there)")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="profile the servers' script runs into DIR (cProfile per kind of run)")
    parser.add_argument("--class-db", choices=("sqlite", "postgres"), default="sqlite",
                        help="postgres: a throwaway PostgreSQL shared by the replicas (sqlite: one file they share)")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= MAX_STUDENTS:
        parser.error(f"--students must lie between 1 and {MAX_STUDENTS}")
    if not 1 <= args.seconds + args.idle <= MAX_SECONDS:
        parser.error(f"--seconds plus --idle must lie between 1 and {MAX_SECONDS}")
    if not 1 <= args.replicas <= 4:
        parser.error("--replicas must lie between 1 and 4")
    if bool(args.url) != bool(args.db) or (args.url and args.replicas != 1):
        parser.error("--url needs --db (and --pid for its CPU), with one replica")
    raise_open_files(2 * args.students + 256)  # a socket per follower here, one in the server (it inherits this)
    solo_ms = machine_step_ms()
    if args.url:  # a server someone else started (another bench's load may run on it meanwhile)
        load = tuple(round(x, 2) for x in os.getloadavg())
        out = asyncio.run(run(args.url, args.db, args.students, args.seconds, args.period, args.idle, args.pid,
                              alone=args.alone))
    else:
        out, load = on_own_servers(args)
    if args.profile:
        out["profile"] = profile_by_run_kind(args.profile)
    out["solo_decode_step_ms"] = solo_ms
    out["goal"] = goal(out, args.replicas, args.class_db)
    out["load_average_at_start"] = load
    out["settings"] = {"period_s": args.period, "seconds": args.seconds, "idle_s": args.idle, "alone": args.alone,
                       "replicas": args.replicas, "class_db": args.class_db, "cores": os.cpu_count(),
                       "autoreg_batch": os.environ.get("AUTOREG_BATCH", "1")}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
