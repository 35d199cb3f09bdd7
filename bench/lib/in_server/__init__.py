"""Code a bench server runs inside itself, installed before it uses Streamlit's script runner.

A server started with ``bench.lib.server_hooks``' environment has ``in_server/site/`` on its PYTHONPATH: Python
imports the ``sitecustomize`` module there at start-up, and it calls ``install_from_environ``, which installs each
hook whose variable is set. Nothing here runs in the bench's own process.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Mapping

RUN_LOG = "AUTOREG_BENCH_RUN_LOG"  # run_timer: one line per script run
BATCHER_LOG = "AUTOREG_BENCH_BATCHER_LOG"  # batcher_dump: the batcher's breakdown, written at exit
PROFILE = "AUTOREG_BENCH_PROFILE"  # run_profiler: every script run's cProfile, merged into one file
PROFILE_DIR = "AUTOREG_BENCH_PROFILE_DIR"  # run_kind_profiler: a cProfile per kind of run, and their CPU
LEAK_LOG = "AUTOREG_LEAK_LOG"  # leak_probe: one JSON line per interval


# The hooks in the order they are installed: the timer first, so that a profiler wraps it (a profiled run is
# slower; the timer then times the profiled run).
HOOKS = ((RUN_LOG, "run_timer"), (BATCHER_LOG, "batcher_dump"), (PROFILE, "run_profiler"),
         (PROFILE_DIR, "run_kind_profiler"))


def install_from_environ(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Install the hooks ``environ`` asks for, in ``HOOKS``' order, then the leak probe. Returns the hooks
    installed."""
    installed = []
    for variable, name in HOOKS:
        if environ.get(variable):
            importlib.import_module(f"bench.lib.in_server.{name}").install(environ[variable])
            installed.append(name)
    if environ.get(LEAK_LOG):
        from bench.lib.in_server import leak_probe

        leak_probe.install(environ[LEAK_LOG], float(environ.get("AUTOREG_LEAK_EVERY", "60")),
                           int(environ.get("AUTOREG_LEAK_FRAMES", "8")))
        installed.append("leak_probe")
    return installed
