"""The leak probe (bench.lib.in_server.leak_probe), installed by PYTHONPATH in a process, writes its lines once a
session exists; bench/leak.py reads them back."""
import json
import subprocess
import sys
import textwrap

from bench import leak
from bench.lib.server_hooks import leak_probe_env

# A stand-in for a Streamlit server: its Runtime (found in sys.modules, never imported by the probe) appears
# after a moment with two sessions whose state has slots, as Streamlit's SessionState has; once the probe's
# first line is written the process allocates and keeps 200 lists, then waits for the second line.
SERVER = textwrap.dedent("""
    import sys, time, types

    class State:
        __slots__ = ("_old_state", "_new_widget_state")

        def __init__(self, n):
            self._old_state, self._new_widget_state = dict.fromkeys(range(n)), {}

    class Info:
        def __init__(self, n):
            self.session = types.SimpleNamespace(session_state=State(n))

    class Runtime:
        _instance = None

    time.sleep(0.3)
    module = types.ModuleType("streamlit.runtime.runtime")
    module.Runtime = Runtime
    sys.modules["streamlit.runtime.runtime"] = module
    sessions = types.SimpleNamespace(list_sessions=lambda: [Info(3), Info(5)])
    Runtime._instance = types.SimpleNamespace(_session_mgr=sessions)
    log = sys.argv[1]

    def lines():
        try:
            return len(open(log).read().splitlines())
        except FileNotFoundError:
            return 0

    deadline, kept = time.time() + 30, None
    while time.time() < deadline and lines() < 2:
        if kept is None and lines() == 1:
            kept = [[i] * 100 for i in range(200)]  # after the first line: growth the second one shows
        time.sleep(0.05)
""")


def test_the_probe_writes_memory_sessions_and_growth(tmp_path):
    env = {**leak_probe_env(tmp_path, every=0.5, frames=4), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", SERVER, env["AUTOREG_LEAK_LOG"]], env=env, timeout=60, check=True)
    lines = [json.loads(x) for x in (tmp_path / "leak.jsonl").read_text().splitlines()]
    assert len(lines) >= 2 and not [x for x in lines if "error" in x]
    first = lines[0]
    assert first["sessions"]["sessions"] == 2
    assert first["sessions"]["totals"]["_old_state"] == 8 and first["sessions"]["max"]["_old_state"] == 5
    assert first["rss_mib"] > 0 and first["malloc"]["in_use_mib"] > 0
    assert lines[1]["objects_grown_since_prev"].get("list", 0) >= 200  # the lists kept after the first line
    rows = leak.summarise(tmp_path)
    assert [r["t"] for r in rows] == [x["t"] for x in lines] and rows[0]["sessions"] == 2


def test_without_frames_there_is_no_tracemalloc_and_no_log_without_a_session(tmp_path):
    env = {**leak_probe_env(tmp_path, every=0.2, frames=0), "PATH": "/usr/bin:/bin"}
    code = "import time, tracemalloc; time.sleep(1.0); assert not tracemalloc.is_tracing()"
    subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=True)
    assert not (tmp_path / "leak.jsonl").exists()  # no session ever appeared: the probe waited
    assert leak.summarise(tmp_path) == []
