"""Every script run of the server timed on its own thread, with the button that started it.

One line per run: ``wall_ms thread_cpu_ms fragment(0/1) trigger`` (trigger: the user key of the button that was
pressed, "-" for none). With the batcher on, the model's pass runs on the batcher's worker thread, so the script
thread's CPU is the click's cost beyond the model.
"""
from __future__ import annotations

import time


def trigger(rerun_data) -> str:
    """The user key of the button whose press started this run ("?" for an id without one, "-" for none)."""
    states = getattr(rerun_data, "widget_states", None)
    for w in (states.widgets if states is not None else ()):
        if w.WhichOneof("value") == "trigger_value" and w.trigger_value:
            return w.id.split("-", 2)[-1] if w.id.startswith("$$ID-") else "?"
    return "-"


def install(log: str) -> None:
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script

    def timed(self, rerun_data, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(self, rerun_data, *args, **kwargs)
        finally:
            wall_ms, cpu_ms = (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000
            fragment = 1 if getattr(rerun_data, "fragment_id_queue", None) else 0
            line = f"{wall_ms:.3f} {cpu_ms:.3f} {fragment} {trigger(rerun_data) or '-'}\n"
            with open(log, "a") as out:
                out.write(line)

    script_runner.ScriptRunner._run_script = timed
