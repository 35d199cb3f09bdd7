"""A class of simulated students against the real app, each its own Streamlit session, over the websocket.

    python -m bench.classroom                          # 30 students, 5 minutes, on a server it starts
    python -m bench.classroom --students 5 --seconds 30
    python -m bench.classroom --url http://127.0.0.1:8501 --pid 1234   # a server already running
    python -m bench.classroom --burst 10               # everyone presses Next token at the same instant
    python -m bench.classroom --burst 10 --compare-batching   # the same, batched and unbatched servers

Each student is what a browser tab is to the server, minus the rendering: it opens the step page
(a ``rerun_script`` request, Streamlit's own ``BackMsg`` protobuf), sets its own seed in the
sidebar, then acts about every 2 s (with random jitter) for the set duration: mostly **Next token**
(the button's widget id with a trigger value, in its fragment), sometimes a sidebar temperature
move, an **Undo** or a **Reset**. It reads the token ids back from the token strip in the
``ForwardMsg`` deltas and times each action from the request to ``script_finished``.

Printed as JSON: actions served and their response times (p50/p95/max, all and per kind), errors,
the server's resident memory over time with its slope after warm-up, and the isolation check:
after the run, every student's action log is replayed alone on a fresh ``Session`` (one thread,
like the server) and every token strip the student saw must equal the replay's tokens at that
point, whole sequence and length. A student who saw another's tokens, or lost its own, fails it.
Also printed: ``prefix_cache``, the server's prefix-cache counters as the tricks page shows them after
the class (every student opened the same prompt): hits, misses, prefill time saved, memory held.

``goals`` (capacity per core; ``bench.lib.goals``): this machine's solo decode step, measured in
this process before the server starts, against the class's Next token p50/p95 (goal: p95 ≤ 8× the solo step);
and the server's CPU per Next token click beyond the model's pass (its script thread's CPU, timed inside the
server) against ``bench/bare_step_shape.py`` (the step page's elements without the app, a second server) clicked
in the same run: ``alone`` (one tab each, interleaved, before the students arrive) and ``during_class`` (one floor
tab clicked at the students' cadence while they work); goal ≤ 1.5×. Beside it, with no verdict, the same against
the bare page (``bench/bare_page.py``), the floor of the earlier goal.
Then the memory slope after warm-up.

Bounded and local: connects to 127.0.0.1 only, stops after ``--seconds`` (at most 15 minutes),
and stops the server it started.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import time
from pathlib import Path

from bench import capacity
from bench.lib.client import AppClient, warm_up
from bench.lib.goals import STEP_SHAPE_CPU_GOAL_RATIO, cpu_comparison, p95_goal
from bench.lib.profiles import per_click_profile_file
from bench.lib.reference import solo_decode_step_ms
from bench.lib.server_hooks import cpu_of, profiler_env, read_batcher, read_runs, timer_env
from bench.lib.servers import ROOT, free_port, local_url, start_server, stop_server
from bench.lib.stats import latency, rounded, slope_after_warmup
from bench.lib.students import NEXT, RESET, SLIDER, UNDO, Action, Student, run_student

MAX_SECONDS = 900
PREFIX_CACHE_PAGE = "tricks"  # its metrics: the shared prefix cache's hits and prefill time saved since the start


# ---------------------------------------------------------------- the solo replay
def sidebar_config(defaults: dict, seed: int, temperature: float | None):
    """The ``SamplingConfig`` the sidebar builds from its widgets' values (defaults unless moved)."""
    from autoreg_core import SamplingConfig
    from autoreg_ui import keys

    def first(key, fallback):
        value = defaults.get(key, fallback)
        return value[0] if isinstance(value, list) and value else (fallback if value is None else value)

    return SamplingConfig(
        temperature=float(temperature if temperature is not None else first(keys.CFG_TEMPERATURE, 1.0)),
        top_k=int(first(keys.CFG_TOP_K, 0)), top_p=float(first(keys.CFG_TOP_P, 1.0)),
        min_p=float(first(keys.CFG_MIN_P, 0.0)), repetition_penalty=float(first(keys.CFG_REPETITION, 1.0)),
        seed=int(seed), max_new_tokens=int(first(keys.CFG_MAX_NEW, 64)))


def replay_student(bundle, student: Student, prompt: str) -> dict:
    """Replay one student's actions alone; count the strips that differ from the replay's tokens."""
    from autoreg_core import Session, SessionError

    session = Session(bundle, prompt)  # the solo reference
    temperature = None
    mismatches, first_mismatch = 0, None
    for n, action in enumerate(student.actions):
        if action.tokens is None:
            continue
        config, _ = sidebar_config(student.defaults, student.seed, temperature).normalized(bundle.spec.vocab)
        if action.kind == SLIDER:
            temperature = action.value
        elif action.kind == NEXT:
            try:
                session.step(config)
            except SessionError:
                pass  # the page refused too (a stop condition): it shows a message, no token
        elif action.kind == UNDO:
            session.undo()
        elif action.kind == RESET:
            session.reset()
        expected = session.generated_ids
        if action.tokens != expected or len(action.tokens) != len(expected):
            mismatches += 1
            if first_mismatch is None:
                first_mismatch = {"action": n, "kind": action.kind, "saw": action.tokens, "replay": expected}
    return {"student": student.index, "strips_checked": sum(a.tokens is not None for a in student.actions),
            "mismatches": mismatches, "first_mismatch": first_mismatch,
            "generated_at_end": len(session.records), "cache_bytes_at_end": session.cache_bytes}


def solo_bundle():
    """The model as the server loads it, in this process, with the server's thread count (the same arithmetic,
    bit for bit): the solo replays and the solo decode step run on it."""
    from autoreg_core import load_model
    from autoreg_ui.state import configure_torch

    configure_torch()
    return load_model()


def check_isolation(students: list[Student], bundle=None) -> dict:
    from autoreg_ui.state import DEFAULT_PROMPT

    bundle = bundle if bundle is not None else solo_bundle()
    t0 = time.perf_counter()
    per_student = [replay_student(bundle, s, DEFAULT_PROMPT) for s in students if not s.refused]
    return {"students_checked": len(per_student),
            "strips_checked": sum(r["strips_checked"] for r in per_student),
            "mismatched_strips": sum(r["mismatches"] for r in per_student),
            "every_student_equals_solo_replay": all(r["mismatches"] == 0 for r in per_student),
            "first_mismatches": [r for r in per_student if r["mismatches"]][:3],
            "replay_seconds": round(time.perf_counter() - t0, 1),
            # what the class's sessions legitimately hold at the end (their KV caches, measured on the
            # replays): server memory that grows by about this much is the class's text, not a leak
            "sessions_at_end": {"generated_tokens": sum(r["generated_at_end"] for r in per_student),
                                "kv_cache_mib": round(sum(r["cache_bytes_at_end"] for r in per_student) / 2**20, 1)}}


# ---------------------------------------------------------------- memory and the summary
async def sample_rss(pid: int | None, started: float, stop: asyncio.Event, every: float, out: list) -> None:
    if pid is None:
        return
    import psutil

    proc = psutil.Process(pid)
    while True:
        try:
            out.append((round(time.perf_counter() - started, 1), round(proc.memory_info().rss / 2**20, 1)))
        except psutil.Error:
            return
        try:
            await asyncio.wait_for(stop.wait(), every)
            return
        except TimeoutError:
            pass


def rss_summary(samples: list[tuple[float, float]], warmup_s: float) -> dict:
    """Memory over time, and its trend after the warm-up (a least-squares slope, MiB per minute)."""
    after = [(t, m) for t, m in samples if t >= warmup_s]
    return {"samples_s_mib": samples, "warmup_s": warmup_s,
            "after_warmup_first_mib": after[0][1] if after else None,
            "after_warmup_last_mib": after[-1][1] if after else None,
            "after_warmup_max_mib": max((m for _, m in after), default=None),
            "after_warmup_slope_mib_per_min": rounded(slope_after_warmup(samples, warmup_s))}


def summarize(students: list[Student], seconds: float, rss: list, warmup_s: float, isolation: dict | None,
              load: tuple[float, float, float]) -> dict:
    actions = [a for s in students for a in s.actions]
    served = [a for a in actions if a.error is None]
    by_kind = {kind: latency([a.seconds for a in served if a.kind == kind]) for kind in (NEXT, SLIDER, UNDO, RESET)}
    errors = [a.error for a in actions if a.error] + [e for s in students for e in s.errors]
    return {
        "students": len(students), "refused_class_full": sum(s.refused for s in students),
        "seconds": round(seconds, 1), "load_average_at_start": load,
        "actions_served": len(served), "actions_per_s": round(len(served) / seconds, 2) if seconds else None,
        "next_token_clicks_served": by_kind[NEXT]["n"],
        "response_time": latency([a.seconds for a in served]),
        "response_time_by_action": by_kind,
        "open_page": latency([s.open_seconds for s in students if s.open_seconds is not None]),
        "errors": len(errors), "error_examples": errors[:5],
        "server_rss": rss_summary(rss, warmup_s),
        "isolation": isolation,
    }


# ---------------------------------------------------------------- the whole class
async def clicks_alone(url: str, floor_urls: list[str], clicks: int) -> None:
    """Before the class: one tab on the step page and one on each floor page press Next token in turn, alone."""
    app, floors = AppClient(url), [AppClient(u, page="") for u in floor_urls]
    try:
        for client in (app, *floors):
            await client.connect()
            await client.open()
        for _ in range(clicks):
            await app.press("step_next")
            for floor in floors:
                await floor.press(BARE_BUTTON)
    finally:
        await asyncio.gather(*(c.close() for c in (app, *floors)), return_exceptions=True)


async def bare_tab(bare_url: str, stop_at: float, period: float, jitter: float, seed: int) -> int:
    """During the class: one bare-page tab pressing Next token at the students' cadence (the floor, same load)."""
    rng, client, clicks = random.Random(seed), AppClient(bare_url, page=""), 0
    await client.connect()
    try:
        await client.open()
        while time.perf_counter() + period < stop_at:
            await asyncio.sleep(period + rng.uniform(-jitter, jitter))
            await client.press(BARE_BUTTON)
            clicks += 1
    finally:
        await client.close()
    return clicks


BARE_BUTTON = "bare_next"  # both floors' Next token
FLOORS = {"bare": "bare_page.py", "bare_shape": "bare_step_shape.py"}  # timer folder → page in bench/


async def run_class(url: str, pid: int | None, n_students: int, seconds: float, period: float, jitter: float,
                    seed: int, ramp_s: float, floor_urls: tuple[str, ...] = (),
                    before_class=None) -> tuple[list[Student], list, float]:
    """The steady class; ``floor_urls``: bare pages each clicked alongside it by one tab; ``before_class()``:
    called once the server is warm, just before the students arrive (it marks where the alone measurements end)."""
    await warm_up(url)
    if before_class is not None:
        await before_class()
    rng = random.Random(seed)
    students = [Student(i, 1000 + i, url, random.Random(rng.random())) for i in range(n_students)]
    started = time.perf_counter()
    stop_at = started + seconds
    rss: list = []
    stop_rss = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, started, stop_rss, max(2.0, seconds / 60), rss))

    async def arrive(student: Student) -> None:
        await asyncio.sleep(ramp_s * student.index / max(1, n_students))  # students arrive over ramp_s
        await run_student(student, started, stop_at, period, jitter)

    floors = [bare_tab(u, stop_at, period, jitter, seed) for u in floor_urls]
    await asyncio.gather(*(arrive(s) for s in students), *floors)
    elapsed = time.perf_counter() - started
    await asyncio.sleep(min(10.0, seconds / 10))  # the tabs are closed: one last sample after they leave
    stop_rss.set()
    await sampler
    return students, rss, elapsed


# ---------------------------------------------------------------- the burst: everyone at once
async def run_burst(url: str, n_students: int, rounds: int, pause_s: float, seed: int) -> tuple[list[Student], list]:
    """Every student opens the page and sets its seed; then, ``rounds`` times, all press Next token at the
    same instant. Per round: when each student's page settled, measured from the shared instant."""
    from autoreg_ui import keys

    await warm_up(url)
    rng = random.Random(seed)
    students = [Student(i, 1000 + i, url, random.Random(rng.random())) for i in range(n_students)]
    clients = [AppClient(url) for _ in students]
    started = time.perf_counter()
    round_rows: list[dict] = []
    try:
        await asyncio.gather(*(c.connect() for c in clients))
        for student, client in zip(students, clients):
            opened = await client.open()
            student.refused = opened.full
            student.open_seconds = opened.seconds
            if not opened.full:
                student.defaults = {k: w.default for k, w in client.widgets.items()}
                student.errors += (await client.set_value(keys.CFG_SEED, student.seed)).exceptions
        seated = [(s, c) for s, c in zip(students, clients) if not s.refused]
        tokens = {s.index: [] for s, _ in seated}
        for number in range(1, rounds + 1):
            await asyncio.sleep(pause_s)

            async def press(student: Student, client: AppClient) -> float:
                max_new = int(student.defaults.get(keys.CFG_MAX_NEW) or 64)
                kind = RESET if len(tokens[student.index]) >= max_new - 1 else NEXT
                result = await client.press({NEXT: "step_next", RESET: "step_reset"}[kind])
                error = "; ".join(result.exceptions) or (None if result.tokens is not None else "no token strip")
                if result.tokens is not None:
                    tokens[student.index] = result.tokens
                student.actions.append(Action(kind, result.seconds, time.perf_counter() - started,
                                              list(tokens[student.index]), None, error))
                return result.seconds

            settled = await asyncio.gather(*(press(s, c) for s, c in seated))
            round_rows.append({"round": number, "last_settled_ms": round(max(settled) * 1000),
                               "median_ms": round(statistics.median(settled) * 1000)})
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    return students, round_rows


async def prefix_cache_stats(url: str) -> dict[str, str]:
    """The server's prefix-cache counters as the tricks page shows them: hits, misses, prefill time saved, memory."""
    client = AppClient(url, page=PREFIX_CACHE_PAGE)
    await client.connect()
    try:
        return (await client.open()).metrics
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--period", type=float, default=2.0, help="seconds between a student's actions")
    parser.add_argument("--jitter", type=float, default=0.5, help="± random seconds on each period")
    parser.add_argument("--ramp", type=float, default=10.0, help="students arrive over this many seconds")
    parser.add_argument("--warmup", type=float, default=None, help="seconds before memory should be flat")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", help="a server already running on this machine (default: start one)")
    parser.add_argument("--pid", type=int, help="that server's process id, for its memory")
    parser.add_argument("--no-replay", action="store_true", help="skip the solo-replay check")
    parser.add_argument("--profile", type=Path, metavar="FILE",
                        help="profile every script run of the server it starts (cProfile) into FILE and print its "
                             "top functions; profiled runs are slower, so the other figures of such a run are not "
                             "the class's")
    parser.add_argument("--alone-clicks", type=int, default=10,
                        help="Next token clicks on the step page and the bare page, alone, before the class")
    parser.add_argument("--streamlit-option", action="append", default=[], metavar="NAME=VALUE",
                        help="passed to the server it starts, e.g. runner.postScriptGC=true")
    parser.add_argument("--burst", type=int, default=0, metavar="ROUNDS",
                        help="instead of the steady class: ROUNDS times, every student presses Next token at once")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds between burst rounds")
    parser.add_argument("--compare-batching", action="store_true",
                        help="run on two servers it starts, AUTOREG_BATCH=1 and =0, and print both")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 200:
        parser.error("--students must lie between 1 and 200")
    if not 1 <= args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds must lie between 1 and {MAX_SECONDS}")
    if not 0 <= args.burst <= 100:
        parser.error("--burst takes 0 to 100 rounds")
    if args.compare_batching and args.url:
        parser.error("--compare-batching starts its own two servers; leave out --url")
    modes = {"batched": "1", "unbatched": "0"} if args.compare_batching else {None: None}
    reports = {mode: one_run(args, batch) for mode, batch in modes.items()}
    print(json.dumps(reports if args.compare_batching else reports[None], indent=2))
    return 0


def one_run(args, batch: str | None) -> dict:
    """One class (steady or burst) on one server; ``batch`` sets AUTOREG_BATCH on a server it starts."""
    import tempfile

    from autoreg_ui.lessons.tricks.text import prefix_stat_labels
    from autoreg_ui.settings import SIDEBAR_DEFAULTS
    from autoreg_ui.state import DEFAULT_PROMPT

    warmup = args.warmup if args.warmup is not None else min(60.0, args.seconds / 3)
    load = tuple(round(x, 2) for x in os.getloadavg())
    bundle = solo_bundle()
    solo_ms = solo_decode_step_ms(bundle, DEFAULT_PROMPT, SIDEBAR_DEFAULTS)  # before any server runs
    server, floors, rounds, prefix_stats, marks = None, {}, None, {}, {}
    timers = Path(tempfile.mkdtemp(prefix="autoreg-classroom-"))
    try:
        if args.url:
            url, pid = args.url, args.pid
        else:
            env = {"AUTOREG_BATCH": batch} if batch is not None else {}
            env.update(timer_env(timers / "app", "app"))
            if args.profile:  # the same folder's sitecustomize, with the profiler added
                env.update(profiler_env(args.profile.resolve()))
            server = start_server(ROOT / "app.py", free_port(), args.streamlit_option, env=env)
            url, pid = local_url(server), server.pid
            if not args.burst:  # the floors, in the same run: bare pages of the step page's shape (see FLOORS)
                floors = {name: start_server(ROOT / "bench" / page, free_port(), args.streamlit_option,
                                             env=timer_env(timers / name, name))
                          for name, page in FLOORS.items()}
        floor_urls = tuple(local_url(proc) for proc in floors.values())

        async def alone() -> None:
            if server is not None:
                await clicks_alone(url, list(floor_urls), args.alone_clicks)
            marks["app"] = len(read_runs(timers / "app", "app"))
            for name in FLOORS:
                marks[name] = len(read_runs(timers / name, name))

        t0 = time.perf_counter()
        if args.burst:
            students, rounds = asyncio.run(run_burst(url, args.students, args.burst, args.pause, args.seed))
            rss, elapsed = [], time.perf_counter() - t0
        else:
            students, rss, elapsed = asyncio.run(run_class(url, pid, args.students, args.seconds, args.period,
                                                           args.jitter, args.seed, min(args.ramp, args.seconds / 2),
                                                           floor_urls, alone))
        prefix_stats = asyncio.run(prefix_cache_stats(url))  # every tab opened the same prompt: one prefill, shared
    finally:
        for proc in (server, *floors.values()):
            if proc is not None:
                stop_server(proc)
    # the same step again once the server is gone: on a shared machine, how far the reference itself moved
    solo_after_ms = solo_decode_step_ms(bundle, DEFAULT_PROMPT, SIDEBAR_DEFAULTS)
    isolation = None if args.no_replay else check_isolation(students, bundle)
    report = summarize(students, elapsed, rss, warmup, isolation, load)
    report["prefix_cache"] = capacity.prefix_cache_counts(prefix_stats, prefix_stat_labels())
    report["goals"] = goals(report, solo_ms, read_runs(timers / "app", "app"),
                            read_runs(timers / "bare", "bare"), marks, batch,
                            shape_runs=read_runs(timers / "bare_shape", "bare_shape"))
    report["goals"]["next_token_vs_solo_step"]["solo_decode_step_ms_after_class"] = round(solo_after_ms, 1)
    report["batcher"] = read_batcher(timers / "app", "app")  # where a step's time went, in the server
    if args.profile:  # every script run of the class (Next token, slider, undo, reset, open), per Next token click
        report["profile"] = per_click_profile_file(args.profile.resolve(), report["next_token_clicks_served"])
    if rounds is not None:
        report["burst_rounds"] = rounds
        report["burst_last_settled"] = latency([r["last_settled_ms"] / 1000 for r in rounds])
    report["settings"] = {"period_s": args.period, "jitter_s": args.jitter, "ramp_s": args.ramp,
                          "burst_rounds": args.burst, "autoreg_batch": batch or os.environ.get("AUTOREG_BATCH", "1"),
                          "alone_clicks": args.alone_clicks, "streamlit_options": args.streamlit_option,
                          "torch_threads_env": os.environ.get("AUTOREG_TORCH_THREADS"),
                          "switch_interval_ms_env": os.environ.get("AUTOREG_SWITCH_INTERVAL_MS"),
                          "omp_wait_policy_env": os.environ.get("OMP_WAIT_POLICY")}
    report["load_average_at_end"] = tuple(round(x, 2) for x in os.getloadavg())
    return report


def goals(report: dict, solo_ms: float, app_runs: list, bare_runs: list, marks: dict, batch: str | None,
          shape_runs: list | None = None) -> dict:
    """The capacity goals read off one run: Next token p95 against the solo decode step; the server's CPU per Next token
    click beyond the model against the bare page's, alone (runs before ``marks``) and during the class (after).
    ``shape_runs``: the second floor's (``bench/bare_step_shape.py``: the step page's elements, no app code), read
    beside the goal's, with no verdict of its own: it says how much of the click is the app's own work."""
    next_token = report["response_time_by_action"][NEXT]
    app_at = marks.get("app", 0)

    def against(runs: list, name: str, goal: float | None) -> dict:
        at = marks.get(name, 0)
        return {when: cpu_comparison(cpu_of(app, "step_next"), cpu_of(floor, BARE_BUTTON), goal)
                for when, app, floor in (("alone", app_runs[:app_at], runs[:at]),
                                         ("during_class", app_runs[app_at:], runs[at:]))}

    out = {"next_token_vs_solo_step": p95_goal(next_token["p50_ms"], next_token["p95_ms"], solo_ms),
           "server_cpu_per_click_beyond_model": against(bare_runs, "bare", None),
           "memory_slope_mib_per_min": report["server_rss"]["after_warmup_slope_mib_per_min"]}
    if shape_runs is not None:
        out["server_cpu_per_click_against_the_step_shape"] = against(shape_runs, "bare_shape",
                                                                     STEP_SHAPE_CPU_GOAL_RATIO)
    if batch == "0":  # unbatched, the model's pass runs on the script thread: its CPU is not "beyond the model"
        out["server_cpu_per_click_beyond_model"]["note"] = "unbatched: the script thread also ran the model's pass"
    return out

if __name__ == "__main__":
    raise SystemExit(main())
