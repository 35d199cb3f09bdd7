"""Capacity per core (issue 28): what a click costs the server beyond the model, and how a class's Next token
compares with this machine's own solo decode step. Pure arithmetic plus the two measurements it needs.

* ``solo_decode_step_ms``: one decode step of the class's prompt, alone, in this process (the server's thread
  count), the reference the class's Next token p95 is read against (goal: p95 ≤ 8× it), so the goal holds on a
  slow machine as on a fast one.
* The server's CPU per click beyond the model: every script run of a bench server is timed on its own thread
  (``RUN_TIMER``, installed by PYTHONPATH as ``sitecustomize``), with the button that triggered it. With the
  batcher on, the model's pass runs on the batcher's worker thread, so the script thread's CPU is the click's
  cost beyond the model; a bare page of the same shape (``bench/bare_page.py``) clicked in the same run is the
  floor (goal: ≤ 2× it).
"""
from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

CPU_GOAL_RATIO = 2.0  # server CPU per Next token click beyond the model ≤ 2× the bare page's
P95_GOAL_RATIO = 8.0  # 30 students: Next token p95 ≤ 8× the solo decode step

# Logged per script run: "wall_ms thread_cpu_ms fragment(0/1) trigger" (trigger: the user key of the button
# that was pressed, "-" for none). Installed before the server imports Streamlit's script runner.
RUN_TIMER = """
import os
import time

_LOG = os.environ.get("AUTOREG_BENCH_RUN_LOG")
if _LOG:
    from streamlit.runtime.scriptrunner import script_runner as _script_runner

    _original = _script_runner.ScriptRunner._run_script

    def _trigger(rerun_data):
        states = getattr(rerun_data, "widget_states", None)
        for w in (states.widgets if states is not None else ()):
            if w.WhichOneof("value") == "trigger_value" and w.trigger_value:
                return w.id.split("-", 2)[-1] if w.id.startswith("$$ID-") else "?"
        return "-"

    def _timed(self, rerun_data, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return _original(self, rerun_data, *args, **kwargs)
        finally:
            line = "%.3f %.3f %d %s\\n" % ((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000,
                                           1 if getattr(rerun_data, "fragment_id_queue", None) else 0,
                                           _trigger(rerun_data) or "-")
            with open(_LOG, "a") as log:
                log.write(line)

    _script_runner.ScriptRunner._run_script = _timed

_BATCHER_LOG = os.environ.get("AUTOREG_BENCH_BATCHER_LOG")
if _BATCHER_LOG:
    import atexit
    import json
    import sys

    def _dump_batchers():
        found = sys.modules.get("autoreg_core.runtime.batcher")
        if found is not None:
            with open(_BATCHER_LOG, "w") as out:
                json.dump([b.breakdown().means() for b in list(found._batchers.values())], out)

    atexit.register(_dump_batchers)  # the server is stopped with SIGTERM: Streamlit exits, atexit runs
"""


def timer_env(folder: Path, name: str) -> dict:
    """The environment that makes a bench server time its script runs into ``folder/name.runs``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(RUN_TIMER)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "AUTOREG_BENCH_RUN_LOG": str(folder / f"{name}.runs"),
            "AUTOREG_BENCH_BATCHER_LOG": str(folder / f"{name}.batcher.json")}


def read_batcher(folder: Path, name: str) -> list[dict] | None:
    """The server's batcher breakdown (``batcher.Breakdown.means``, one per loaded model), written as it exited."""
    import json

    log = folder / f"{name}.batcher.json"
    return json.loads(log.read_text()) if log.exists() else None


def parse_runs(text: str) -> list[tuple[float, float, int, str]]:
    """(wall ms, thread CPU ms, fragment 0/1, trigger key) per logged run; a line without a trigger gets "-"."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            rows.append((float(parts[0]), float(parts[1]), int(parts[2]), parts[3] if len(parts) > 3 else "-"))
    return rows


def read_runs(folder: Path, name: str) -> list[tuple[float, float, int, str]]:
    log = folder / f"{name}.runs"
    return parse_runs(log.read_text()) if log.exists() else []


def cpu_of(runs: list[tuple[float, float, int, str]], trigger: str) -> list[float]:
    """The thread CPU (ms) of the runs the button ``trigger`` started."""
    return [cpu for _, cpu, _, key in runs if key == trigger]


def cpu_comparison(app_ms: list[float], bare_ms: list[float], goal: float | None = CPU_GOAL_RATIO) -> dict:
    """Median server CPU per click beyond the model, the app's Next token against a floor page's, and the verdict
    (``goal`` None: a floor read for information, with no verdict)."""
    app = statistics.median(app_ms) if app_ms else None
    bare = statistics.median(bare_ms) if bare_ms else None
    ratio = app / bare if app is not None and bare else None
    out = {"step_next_token_cpu_ms": _r(app), "bare_next_token_cpu_ms": _r(bare),
           "clicks": [len(app_ms), len(bare_ms)], "ratio": _r(ratio, 2)}
    if goal is not None:
        out.update(goal_ratio=goal, meets_goal=None if ratio is None else ratio <= goal)
    return out


def p95_goal(p50_ms: float | None, p95_ms: float | None, solo_ms: float | None, goal: float = P95_GOAL_RATIO) -> dict:
    """The class's Next token p50/p95 against this machine's solo decode step, and the verdict."""
    ratio = p95_ms / solo_ms if p95_ms is not None and solo_ms else None
    return {"solo_decode_step_ms": _r(solo_ms), "next_token_p50_ms": _r(p50_ms), "next_token_p95_ms": _r(p95_ms),
            "p95_over_solo": _r(ratio, 2), "goal_ratio": goal, "meets_goal": None if ratio is None else ratio <= goal}


def _r(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def solo_decode_step_ms(bundle, prompt: str, config, steps: int = 20, warmup: int = 3) -> float:
    """Median wall time of one decode step of ``prompt`` alone (no batcher, nothing else in this process)."""
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


def prefix_cache_counts(metrics: dict[str, str], labels: tuple[str, ...]) -> dict:
    """The tricks page's prefix-cache metrics (label → shown text) as numbers: hits, misses and the hit rate.

    ``labels``: the page's (hits, misses, saved, held) labels. A missing metric gives None (the page was not shown).
    """
    def count(label: str) -> int | None:
        shown = metrics.get(label)
        return int(shown.replace(",", "")) if shown is not None and shown.replace(",", "").isdigit() else None

    hits, misses = count(labels[0]), count(labels[1])
    looked_up = None if hits is None or misses is None else hits + misses
    return {"shown": dict(metrics), "hits": hits, "misses": misses,
            "hit_rate": round(hits / looked_up, 3) if looked_up else None,
            "prefill_time_saved": metrics.get(labels[2]), "memory_held": metrics.get(labels[3])}


# With ``--profile``: every script run of the server is profiled (cProfile, on its own thread) and the merged
# statistics are written to AUTOREG_BENCH_PROFILE every 25 runs (the server is stopped, not asked to exit).
PROFILER = """
import os
import threading

_OUT = os.environ.get("AUTOREG_BENCH_PROFILE")
if _OUT:
    import cProfile
    import pstats

    from streamlit.runtime.scriptrunner import script_runner as _script_runner

    _inner = _script_runner.ScriptRunner._run_script
    _lock = threading.Lock()
    _merged = {"stats": None, "runs": 0}

    def _profiled(self, rerun_data, *args, **kwargs):
        profile = cProfile.Profile()
        profile.enable()
        try:
            return _inner(self, rerun_data, *args, **kwargs)
        finally:
            profile.disable()
            with _lock:
                if _merged["stats"] is None:
                    _merged["stats"] = pstats.Stats(profile)
                else:
                    _merged["stats"].add(profile)
                _merged["runs"] += 1
                if _merged["runs"] % 25 == 0:
                    _merged["stats"].dump_stats(_OUT)

    def _dump():
        with _lock:
            if _merged["stats"] is not None:
                _merged["stats"].dump_stats(_OUT)

    import atexit

    atexit.register(_dump)  # the last runs too, when the server exits on SIGTERM
    _script_runner.ScriptRunner._run_script = _profiled
"""


def profiler_env(folder: Path, out: Path) -> dict:
    """``timer_env`` plus a cProfile of every script run, merged into ``out`` (the timer still times the runs:
    profiled, they are slower, so read the profile's shares, not its milliseconds)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(RUN_TIMER + PROFILER)
    return {"AUTOREG_BENCH_PROFILE": str(out)}


def profile_report(path: Path, clicks: int, top: int = 25) -> dict:
    """The merged profile of the class's script runs, per Next token click (see ``click_cost.profile_summary``)."""
    import pstats

    from bench.click_cost import profile_summary

    if not path.exists():
        return {"error": f"no profile written to {path}"}
    return {"file": str(path), **profile_summary(pstats.Stats(str(path)), max(1, clicks), top)}
