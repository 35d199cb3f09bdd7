"""Every script run of the server profiled by the CPU time of its own thread, and sorted by kind: ``update`` (a run
that drew a class's page: the follower element's ``render`` or ``follow_here`` ran) or ``poll`` (a follower's polling
fragment that found nothing new). Each run's wall and CPU ms go to ``<pid>.runs``, the merged profiles every 25 runs
to ``<pid>-<kind>.prof``, all in one folder."""
from __future__ import annotations

import cProfile
import os
import pstats
import threading
import time

UPDATE_FUNCTIONS = ("render", "follow_here")  # in classroom/mode.py


def kind(profile) -> str:
    for path, _line, name in profile.stats:
        if name in UPDATE_FUNCTIONS and path.endswith(os.path.join("classroom", "mode.py")):
            return "update"
    return "poll"


def install(folder: str) -> None:
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script
    lock = threading.Lock()
    merged: dict[str, pstats.Stats] = {}
    count = [0]

    def profiled(self, rerun_data, *args, **kwargs):
        profile = cProfile.Profile(time.thread_time)  # CPU, not waits: what each function costs the server
        wall, cpu = time.perf_counter(), time.thread_time()
        profile.enable()
        try:
            return original(self, rerun_data, *args, **kwargs)
        finally:
            profile.disable()
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            profile.create_stats()
            found = kind(profile)
            with lock:
                if found in merged:
                    merged[found].add(profile)
                else:
                    merged[found] = pstats.Stats(profile)
                count[0] += 1
                with open(os.path.join(folder, f"{os.getpid()}.runs"), "a") as log:
                    log.write(f"{found} {wall * 1000:.3f} {cpu * 1000:.3f}\n")
                if count[0] % 25 == 0:
                    for name, stats in merged.items():
                        stats.dump_stats(os.path.join(folder, f"{os.getpid()}-{name}.prof"))

    script_runner.ScriptRunner._run_script = profiled
