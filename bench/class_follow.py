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

A lecture across replicas (issue 28's goal: 120 followers in one class across 2 replicas plus PostgreSQL, every
teacher step reaching every follower with the same text, follow delay p95 at most 2 s):

    python -m bench.class_follow --replicas 2 --class-db postgres --students 120 --seconds 120

starts a throwaway PostgreSQL (``tests/postgres.py``), ``--replicas`` servers on it, the teacher's tab on the
first and the followers dealt round-robin over all of them (as the balancer's cookie would pin them), and adds
the delays per replica, the machine's solo decode step (the embedded model, one tab, measured first in this
process: the yardstick the goals are read against) and the goal's verdict.

``--profile DIR`` profiles every script run inside the servers (``RUN_PROFILER``, installed by PYTHONPATH as
``bench/click_cost.py``'s RUN_TIMER is): each run's wall and thread CPU time, and a cProfile per kind of run
(``poll``: a follower's polling fragment that found nothing new; ``update``: a run that drew the page) written
to DIR as ``<pid>-<kind>.prof``; the JSON adds the runs' CPU per kind and the top functions of each.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
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
ARRIVING_TOGETHER = 8  # followers opening their page at once
GOAL_FOLLOWERS, GOAL_P95_S = 120, 2.0  # issue 28: 120 followers across 2 replicas + PostgreSQL, p95 <= 2 s
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
    replica: int = 0  # which server (index into the run's urls) serves this follower


def next_poll(began: float, ended: float, phase: float, interval: float) -> float:
    """When the browser's next poll starts, the last one having run from ``began`` to ``ended``.

    Streamlit's browser side reruns a ``run_every`` fragment with ``setInterval``: a request every ``interval``
    seconds from ``phase``, whether or not the last run has ended. The server queues a request that comes while the
    fragment runs (several coalesce into one) and starts it when the run ends. So the next run starts at the first
    tick after the last run began, or at once when that tick came while it ran.
    """
    first_tick = phase + (math.floor((began - phase) / interval) + 1) * interval
    return max(first_tick, ended)


async def follow(f: Follower, stop: asyncio.Event) -> None:
    """Poll as the browser does (``next_poll``); note each strip that differs from the one drawn before."""
    if f.client.auto_rerun is None:
        f.errors.append("the Class page set no polling fragment")
        return
    interval = f.client.auto_rerun[0]
    phase = time.perf_counter()  # the interval starts when the page has drawn its fragment
    start = phase + interval
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), max(0.0, start - time.perf_counter()))
            return
        except TimeoutError:
            pass
        began = time.perf_counter()
        try:
            result = await f.client.poll()
        except Exception as exc:  # noqa: BLE001 - a failed poll is a finding
            f.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            return
        start = next_poll(began, time.perf_counter(), phase, interval)
        f.polls += 1
        f.errors += result.exceptions
        if result.tokens is not None and result.tokens != f.seen:
            f.seen = result.tokens
            f.updates.append((time.perf_counter(), list(result.tokens)))


RUN_PROFILER = """
import os

_DIR = os.environ.get("AUTOREG_BENCH_PROFILE_DIR")
if _DIR:
    import cProfile
    import pstats
    import threading
    import time

    from streamlit.runtime.scriptrunner import script_runner as _script_runner

    _original = _script_runner.ScriptRunner._run_script
    _lock = threading.Lock()
    _stats = {}
    _count = [0]

    def _kind(profile):
        for (path, _line, name) in profile.stats:
            if name == "render" and path.endswith(os.path.join("classroom", "mode.py")):
                return "update"
            if name == "follow_here" and path.endswith(os.path.join("classroom", "mode.py")):
                return "update"
        return "poll"

    def _profiled(self, rerun_data, *args, **kwargs):
        profile = cProfile.Profile(time.thread_time)  # CPU, not waits: what each function costs the server
        wall, cpu = time.perf_counter(), time.thread_time()
        profile.enable()
        try:
            return _original(self, rerun_data, *args, **kwargs)
        finally:
            profile.disable()
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            profile.create_stats()
            kind = _kind(profile)
            with _lock:
                if kind in _stats:
                    _stats[kind].add(profile)
                else:
                    _stats[kind] = pstats.Stats(profile)
                _count[0] += 1
                with open(os.path.join(_DIR, "%d.runs" % os.getpid()), "a") as log:
                    log.write("%s %.3f %.3f\\n" % (kind, wall * 1000, cpu * 1000))
                if _count[0] % 25 == 0:
                    for name, stats in _stats.items():
                        stats.dump_stats(os.path.join(_DIR, "%d-%s.prof" % (os.getpid(), name)))

    _script_runner.ScriptRunner._run_script = _profiled
"""


def profile_env(folder: Path) -> dict:
    """The environment that makes a bench server profile its script runs into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(RUN_PROFILER)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "AUTOREG_BENCH_PROFILE_DIR": str(folder)}


def profile_summary(folder: Path, top: int = 25) -> dict:
    """The servers' script runs by kind (count, CPU per run) and each kind's top functions by cumulative time."""
    import io
    import pstats
    import statistics

    runs: dict[str, list[float]] = {}
    for log in folder.glob("*.runs"):
        for line in log.read_text().splitlines():
            kind, _wall, cpu = line.split()
            runs.setdefault(kind, []).append(float(cpu))
    out = {kind: {"runs": len(cpus), "cpu_ms_median": round(statistics.median(cpus), 2),
                  "cpu_ms_mean": round(statistics.fmean(cpus), 2)} for kind, cpus in runs.items()}
    for kind in runs:
        files = sorted(str(f) for f in folder.glob(f"*-{kind}.prof"))
        if files:
            text = io.StringIO()
            pstats.Stats(*files, stream=text).sort_stats("cumulative").print_stats(top)
            (folder / f"{kind}.txt").write_text(text.getvalue())
            out[kind]["profile"] = str(folder / f"{kind}.txt")
    return out


def _cpu(pids: list[int]) -> float | None:
    return sum(cpu_seconds(p) for p in pids) if pids else None


async def run(url: str | list[str], db: Path | str, n_students: int, seconds: float, period: float, idle_s: float,
              pid: int | list[int] | None, db_cpu=None) -> dict:
    """One class: the teacher on the first of ``url`` (one address, or one per replica), followers dealt over all
    of them; ``pid`` the servers' process ids (their CPU is summed); ``db_cpu`` the database's CPU seconds so far
    (a callable: PostgreSQL's processes are not the servers')."""
    from autoreg_ui.classroom.store import ClassStore

    urls = [url] if isinstance(url, str) else list(url)
    pids = [pid] if isinstance(pid, int) else [p for p in (pid or []) if p]
    store = ClassStore(db, max_students=max(60, n_students))
    code, key = store.create()
    seats = [store.join(code, f"s{i}", source=f"bench-{i}") for i in range(n_students)]
    store.close()
    url = urls[0]
    teacher = AppClient(url, STEP_PAGE, urllib.parse.urlencode({"prompt": PROMPT, "cfg_temperature": "0",
                                                                "class": code, "key": key}))
    await teacher.connect()
    opened = await teacher.open()
    errors = list(opened.exceptions)
    followers = [Follower(i, seat, AppClient(urls[i % len(urls)], CLASS_PAGE,
                                             urllib.parse.urlencode({"class": code, "seat": seat})),
                          replica=i % len(urls))
                 for i, seat in enumerate(seats)]

    async def arrive(f: Follower) -> None:
        await f.client.connect()
        first = await f.client.open()
        f.errors += first.exceptions
        f.seen = first.tokens or []

    for batch in range(0, len(followers), ARRIVING_TOGETHER):
        await asyncio.gather(*(arrive(f) for f in followers[batch:batch + ARRIVING_TOGETHER]))
    stop = asyncio.Event()
    tasks = [asyncio.create_task(follow(f, stop)) for f in followers]

    cpu0, t0, db0 = _cpu(pids), time.perf_counter(), db_cpu() if db_cpu else None
    await asyncio.sleep(idle_s)  # the class sits still: polling only
    cpu_idle, idle_elapsed = ((_cpu(pids) - cpu0) if pids else None), time.perf_counter() - t0
    db_idle = db_cpu() - db0 if db_cpu else None
    polls_idle = sum(f.polls for f in followers)

    steps: list[tuple[float, list[int]]] = []  # (click time, the teacher's generated ids after it)
    pressed: list[float] = []  # how long each Next token took to answer the teacher
    cpu1, t1, db1 = _cpu(pids), time.perf_counter(), db_cpu() if db_cpu else None
    stop_at = t1 + seconds
    shown = opened.tokens or []
    while time.perf_counter() < stop_at:
        clicked = time.perf_counter()
        result = await teacher.press("step_next")
        pressed.append(time.perf_counter() - clicked)
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
    cpu_steps, steps_elapsed = ((_cpu(pids) - cpu1) if pids else None), time.perf_counter() - t1
    db_steps = db_cpu() - db1 if db_cpu else None
    for c in [teacher] + [f.client for f in followers]:
        await c.close()
    out = report(steps, followers, errors, cpu_idle, idle_elapsed, polls_idle, cpu_steps, steps_elapsed)
    out["teacher_next_token"] = latency(pressed)
    if db_cpu:  # the database's own CPU, read the same way (idle polling, then per follower update)
        db = report(steps, followers, [], db_idle, idle_elapsed, polls_idle, db_steps, steps_elapsed)["server_cpu"]
        out["database_cpu"] = {"idle_s_per_s": db["idle_polling_s_per_s"], "while_stepping_s": db["while_stepping_s"],
                               "per_follower_update_ms": db["per_follower_update_ms"]}
    return out


def report(steps, followers, errors, cpu_idle, idle_s, polls_idle, cpu_steps, steps_s) -> dict:
    """Each teacher change's delay to each follower: the first strip after the click equal to the teacher's
    (whole sequence and length). A follower whose next strip after the click was another one (it skipped
    this change, or showed other tokens) counts as not equal, with that strip's delay; none at all, missed."""
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
    poll_rate = cpu_idle / idle_s if cpu_idle is not None and idle_s else None
    known = cpu_steps is not None and updates and poll_rate is not None
    per_update = ((cpu_steps - poll_rate * steps_s) / updates) if known else None
    return {
        "followers": len(followers), "teacher_steps": len(steps),
        "follower_updates": updates, "missed_updates": missed, "strips_not_equal_to_the_teachers": wrong,
        # of those: strips that are no text the teacher ever had (the rest skipped to a later step)
        "strips_matching_no_teacher_step": alien,
        "delay_click_to_follower_page": latency(delays),
        "delay_per_replica": {f"r{r + 1}": latency(d) for r, d in sorted(by_replica.items())},
        "errors": len(errors) + sum(len(f.errors) for f in followers),
        "error_examples": (errors + [e for f in followers for e in f.errors])[:5],
        "server_cpu": {
            "idle_polling_s_per_s": None if poll_rate is None else round(poll_rate, 3),
            "polls_while_idle": polls_idle, "idle_seconds": round(idle_s, 1),
            "while_stepping_s": None if cpu_steps is None else round(cpu_steps, 2),
            "stepping_seconds": round(steps_s, 1),
            "per_follower_update_ms": None if per_update is None else round(per_update * 1000, 1)},
    }


def solo_decode_step_ms(steps: int = 16) -> float:
    """The machine's own decode step: the embedded model, one tab alone, greedy, median of ``steps`` steps, with
    the server's torch threads."""
    import torch

    from autoreg_core import SamplingConfig, Session, load_model
    from autoreg_ui.state import torch_threads

    torch.set_num_threads(torch_threads())
    session = Session(load_model(), PROMPT)
    records = session.generate(steps + 1, SamplingConfig(temperature=0.0, max_new_tokens=steps + 1))
    times = sorted(r.time_ms for r in records[1:])  # the first step also pays the prefill
    return round(times[len(times) // 2], 1)


def _throwaway_postgres():
    """tests/postgres.py's cluster: initdb in a temp folder (as the postgres user when root), a free port."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("autoreg_test_postgres", ROOT / "tests" / "postgres.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if module.server_bin() is None:
        raise SystemExit("PostgreSQL's server (initdb, pg_ctl) is not installed (Debian: apt-get install postgresql)")
    return module.start_cluster()


def postgres_cpu(cluster) -> float:
    """CPU seconds of the throwaway PostgreSQL so far: the postmaster, its live backends and the ones it reaped."""
    import psutil

    pid = int((cluster.folder / "data" / "postmaster.pid").read_text().split()[0])
    main = psutil.Process(pid)
    total = sum(main.cpu_times()[:4])  # user, system, and its reaped children's
    for child in main.children():
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


def goal(out: dict, replicas: int, class_db: str) -> dict:
    """Issue 28's goal, read off this run: every step reached every follower with the same text, p95 <= 2 s."""
    p95_ms = out["delay_click_to_follower_page"].get("p95_ms")
    p95 = None if p95_ms is None else p95_ms / 1000
    everyone = out["teacher_steps"] > 0 and out["missed_updates"] == 0 and out["strips_not_equal_to_the_teachers"] == 0
    return {"goal": f"{GOAL_FOLLOWERS} followers, 2 replicas + PostgreSQL, every step to every follower, "
                    f"p95 <= {GOAL_P95_S} s",
            "this_run": f"{out['followers']} followers, {replicas} replica(s) + {class_db}",
            "every_step_reached_every_follower_with_the_same_text": everyone,
            "p95_within_goal": p95 is not None and p95 <= GOAL_P95_S,
            "met": everyone and p95 is not None and p95 <= GOAL_P95_S and out["errors"] == 0
            and out["followers"] >= GOAL_FOLLOWERS and replicas >= 2 and class_db == "postgres"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=180.0, help="how long the teacher steps")
    parser.add_argument("--period", type=float, default=3.0, help="seconds between the teacher's steps")
    parser.add_argument("--idle", type=float, default=15.0, help="seconds of polling before the first step")
    parser.add_argument("--replicas", type=int, default=1, help="servers sharing the class (1 to 4)")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="profile the servers' script runs into DIR (cProfile per kind of run)")
    parser.add_argument("--class-db", choices=("sqlite", "postgres"), default="sqlite",
                        help="postgres: a throwaway PostgreSQL shared by the replicas (sqlite: one file they share)")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200:
        parser.error("--students must lie between 1 and 200")
    if not 1 <= args.seconds + args.idle <= MAX_SECONDS:
        parser.error(f"--seconds plus --idle must lie between 1 and {MAX_SECONDS}")
    if not 1 <= args.replicas <= 4:
        parser.error("--replicas must lie between 1 and 4")
    solo_ms = solo_decode_step_ms()
    cluster = _throwaway_postgres() if args.class_db == "postgres" else None
    servers = []
    try:
        with tempfile.TemporaryDirectory(prefix="autoreg-class-bench-") as tmp:
            db = cluster.dsn if cluster else Path(tmp) / "classes.sqlite3"
            for _ in range(args.replicas):
                servers.append(start_server(ROOT / "app.py", free_port(), env={
                    "AUTOREG_CLASS_DB": str(db), "AUTOREG_MAX_SESSIONS": "0",
                    "AUTOREG_CLASS_SEATS": str(max(60, args.students)),
                    **(profile_env(args.profile) if args.profile else {})}))
            load = tuple(round(x, 2) for x in os.getloadavg())
            out = asyncio.run(run([local_url(s) for s in servers], db, args.students, args.seconds, args.period,
                                  args.idle, [s.pid for s in servers],
                                  db_cpu=(lambda: postgres_cpu(cluster)) if cluster else None))
    finally:
        for server in servers:
            stop_server(server)
        if cluster is not None:
            cluster.stop()
    if args.profile:
        out["profile"] = profile_summary(args.profile)
    out["solo_decode_step_ms"] = solo_ms
    out["goal"] = goal(out, args.replicas, args.class_db)
    out["load_average_at_start"] = load
    out["settings"] = {"period_s": args.period, "seconds": args.seconds, "idle_s": args.idle,
                       "replicas": args.replicas, "class_db": args.class_db, "cores": os.cpu_count(),
                       "autoreg_batch": os.environ.get("AUTOREG_BATCH", "1")}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
