"""Local servers for the benches and checks: Streamlit started on 127.0.0.1 and a free port, health waits
bounded in time, stopped again; and the CPU time a server process has used."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 180


def free_port() -> int:
    """A TCP port free on the loopback interface now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def is_healthy(url: str) -> bool:
    """Streamlit's health check at ``url`` answers ok."""
    try:
        return urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok"
    except OSError:
        return False


def wait_healthy(url: str, timeout: float = START_TIMEOUT_S, proc: subprocess.Popen | None = None) -> bool:
    """Wait until ``url`` answers its health check; False after ``timeout`` s or once ``proc`` has exited."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        if is_healthy(url):
            return True
        time.sleep(0.5)
    return False


def start_server(script: Path, port: int, options: Iterable[str] = (), env: dict | None = None,
                 cwd: Path = ROOT) -> subprocess.Popen:
    """``streamlit run script`` on 127.0.0.1:port from ``cwd`` (whose .streamlit/config.toml it reads).

    ``options`` are ``name=value`` pairs passed as ``--name value``. The log goes to a temporary file
    named in the process's ``log_path`` attribute. Waits until the server answers its health check.
    """
    # the app itself starts as `make run` starts it (autoreg_ui.serve: st.navigation from the first visit,
    # even when the first visitor arrives by a link to a page); any other script with `streamlit run`
    run = ["-m", "autoreg_ui.serve"] if Path(script).name == "app.py" else ["-m", "streamlit", "run", str(script)]
    args = [sys.executable, *run, "--server.port", str(port), "--server.address", "127.0.0.1",
            "--server.headless", "true"]
    for option in options:
        name, _, value = option.partition("=")
        args += [f"--{name}", value]
    log = tempfile.NamedTemporaryFile("w", prefix="autoreg-bench-", suffix=".log", delete=False)
    proc = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})
    proc.log_path = log.name
    proc.port = port
    if wait_healthy(local_url(proc), START_TIMEOUT_S, proc):
        return proc
    if proc.poll() is not None:
        raise RuntimeError(f"the server exited; see {log.name}")
    stop_server(proc)
    raise RuntimeError(f"the server did not start in {START_TIMEOUT_S} s; see {log.name}")


def local_url(proc: subprocess.Popen) -> str:
    return f"http://127.0.0.1:{proc.port}"


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM (Streamlit exits and its atexit hooks run), then SIGKILL if it has not gone in 30 s."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system
