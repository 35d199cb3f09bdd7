"""Every script run of the server profiled (cProfile, on its own thread), merged into one statistics file written
every 25 runs and at exit (the server is stopped, not asked to exit). Profiled runs are slower: read the shares."""
from __future__ import annotations

import atexit
import cProfile
import pstats
import threading


def install(out: str) -> None:
    from streamlit.runtime.scriptrunner import script_runner

    inner = script_runner.ScriptRunner._run_script
    lock = threading.Lock()
    merged: dict = {"stats": None, "runs": 0}

    def profiled(self, rerun_data, *args, **kwargs):
        profile = cProfile.Profile()
        profile.enable()
        try:
            return inner(self, rerun_data, *args, **kwargs)
        finally:
            profile.disable()
            with lock:
                if merged["stats"] is None:
                    merged["stats"] = pstats.Stats(profile)
                else:
                    merged["stats"].add(profile)
                merged["runs"] += 1
                if merged["runs"] % 25 == 0:
                    merged["stats"].dump_stats(out)

    def dump() -> None:
        with lock:
            if merged["stats"] is not None:
                merged["stats"].dump_stats(out)

    atexit.register(dump)  # the last runs too, when the server exits on SIGTERM
    script_runner.ScriptRunner._run_script = profiled
