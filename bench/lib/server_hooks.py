"""The bench's side of the hooks a server carries inside it (``bench.lib.in_server``): the environment that makes a
server started with it install each one, and the logs they write, read back.

Every environment here puts ``in_server/site`` (its ``sitecustomize``) and the repository's top on PYTHONPATH, so
they merge: ``{**timer_env(...), **profiler_env(...)}`` gives a server both hooks.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from bench.lib import in_server
from bench.lib.servers import ROOT

SITE = Path(in_server.__file__).resolve().parent / "site"

Run = tuple[float, float, int, str]  # wall ms, script thread CPU ms, fragment 0/1, trigger key ("-": none)


def _pythonpath() -> str:
    return os.pathsep.join(p for p in (str(SITE), str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


def timer_env(folder: Path, name: str) -> dict:
    """The environment that makes a server time its script runs into ``folder/name.runs`` (``read_runs``) and
    write its batcher's breakdown to ``folder/name.batcher.json`` as it exits (``read_batcher``)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"PYTHONPATH": _pythonpath(), in_server.RUN_LOG: str(folder / f"{name}.runs"),
            in_server.BATCHER_LOG: str(folder / f"{name}.batcher.json")}


def profiler_env(out: Path) -> dict:
    """A cProfile of every script run, merged into ``out`` (with ``timer_env`` the timer still times the runs:
    profiled, they are slower, so read the profile's shares, not its milliseconds)."""
    return {"PYTHONPATH": _pythonpath(), in_server.PROFILE: str(out)}


def run_kind_profiler_env(folder: Path) -> dict:
    """A cProfile per kind of script run (poll, update) and each run's CPU, into ``folder``
    (``bench.lib.profiles.profile_by_run_kind`` reads them)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"PYTHONPATH": _pythonpath(), in_server.PROFILE_DIR: str(folder)}


def leak_probe_env(folder: Path, every: float = 60.0, frames: int = 8) -> dict:
    """The leak probe's lines, one every ``every`` s, into ``folder/leak.jsonl`` (``frames``: tracemalloc's frames
    per allocation, 0 for none)."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"PYTHONPATH": _pythonpath(), in_server.LEAK_LOG: str(folder / "leak.jsonl"),
            "AUTOREG_LEAK_EVERY": str(every), "AUTOREG_LEAK_FRAMES": str(frames)}


def parse_runs(text: str) -> list[Run]:
    """(wall ms, thread CPU ms, fragment 0/1, trigger key) per logged run; a line without a trigger gets "-"."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            rows.append((float(parts[0]), float(parts[1]), int(parts[2]), parts[3] if len(parts) > 3 else "-"))
    return rows


def read_runs(folder: Path, name: str) -> list[Run]:
    log = folder / f"{name}.runs"
    return parse_runs(log.read_text()) if log.exists() else []


def cpu_of(runs: list[Run], trigger: str) -> list[float]:
    """The thread CPU (ms) of the runs the button ``trigger`` started."""
    return [cpu for _, cpu, _, key in runs if key == trigger]


def read_batcher(folder: Path, name: str) -> list[dict] | None:
    """The server's batcher breakdown (``batcher.Breakdown.means``, one per loaded model), written as it exited."""
    log = folder / f"{name}.batcher.json"
    return json.loads(log.read_text()) if log.exists() else None
