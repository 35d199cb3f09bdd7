"""Code a bench server runs inside itself, installed before it uses Streamlit's script runner.

A server started with ``bench.lib.server_hooks``' environment has ``in_server/site/`` on its PYTHONPATH: Python
imports the ``sitecustomize`` module there at start-up, and it calls ``install_from_environ``, which installs each
hook whose variable is set. Nothing here runs in the bench's own process.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

RUN_LOG = "AUTOREG_BENCH_RUN_LOG"  # run_timer: one line per script run
BATCHER_LOG = "AUTOREG_BENCH_BATCHER_LOG"  # batcher_dump: the batcher's breakdown, written at exit
PROFILE = "AUTOREG_BENCH_PROFILE"  # run_profiler: every script run's cProfile, merged into one file
PROFILE_DIR = "AUTOREG_BENCH_PROFILE_DIR"  # run_kind_profiler: a cProfile per kind of run, and their CPU
LEAK_LOG = "AUTOREG_LEAK_LOG"  # leak_probe: one JSON line per interval


def install_from_environ(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Install the hooks ``environ`` asks for, the timer first so that a profiler wraps it (a profiled run is
    slower; the timer then times the profiled run). Returns the hooks installed."""
    installed = []
    if environ.get(RUN_LOG):
        from bench.lib.in_server import run_timer

        run_timer.install(environ[RUN_LOG])
        installed.append("run_timer")
    if environ.get(BATCHER_LOG):
        from bench.lib.in_server import batcher_dump

        batcher_dump.install(environ[BATCHER_LOG])
        installed.append("batcher_dump")
    if environ.get(PROFILE):
        from bench.lib.in_server import run_profiler

        run_profiler.install(environ[PROFILE])
        installed.append("run_profiler")
    if environ.get(PROFILE_DIR):
        from bench.lib.in_server import run_kind_profiler

        run_kind_profiler.install(environ[PROFILE_DIR])
        installed.append("run_kind_profiler")
    if environ.get(LEAK_LOG):
        from bench.lib.in_server import leak_probe

        leak_probe.install(environ[LEAK_LOG], float(environ.get("AUTOREG_LEAK_EVERY", "60")),
                           int(environ.get("AUTOREG_LEAK_FRAMES", "8")))
        installed.append("leak_probe")
    return installed
