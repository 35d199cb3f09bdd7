"""deploy/check_replicas.py, run as an operator would: two replicas behind HAProxy, 4 students, 2 clicks.

With the cookie affinity every student stays on one replica and every download comes from the replica
that made it; without it, downloads land on the wrong replica: the run proves the check can fail.
"""
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, CHROMIUM

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "check_replicas.py"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def _run(*extra: str) -> dict:
    if not Path(HAPROXY).exists():
        pytest.skip("haproxy is not installed: Debian's 'haproxy' package (make test installs it when it can)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    done = subprocess.run([sys.executable, str(SCRIPT), "--students", "4", "--clicks", "2", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=420)
    ARTIFACTS.mkdir(exist_ok=True)
    name = "replicas-" + ("without-affinity" if extra else "affinity") + ".json"
    (ARTIFACTS / name).write_text(done.stdout)
    assert done.stdout.strip(), done.stderr[-2000:]
    return json.loads(done.stdout)


def test_with_affinity_every_student_stays_on_one_replica():
    out = _run()
    assert out["failed_step"] is None, out["failed_step"]
    assert out["per_replica"] == {"r1": 2, "r2": 2} and out["spread_across_both"]
    assert [s["tokens_seen"] for s in out["students"]] == [[1, 2]] * 4
    assert [s["csv_rows"] for s in out["students"]] == [[2, 2]] * 4
    assert out["downloads_from_the_right_replica"] == "8/8" and out["every_session_stayed_put"] is True


def test_without_affinity_the_check_shows_requests_reaching_the_wrong_replica():
    out = _run("--without-affinity")
    assert out["failed_step"] is None, out["failed_step"]
    assert len(out["students"]) == 4 and all(s["replica"] is None for s in out["students"])  # no cookie
    rows = [r for s in out["students"] for r in s["csv_rows"]]
    assert len(rows) == 8 and None in rows  # two downloads in a row alternate between the replicas
    assert out["every_session_stayed_put"] is False


def test_a_step_that_does_not_happen_names_the_student_and_the_step():
    spec = importlib.util.spec_from_file_location("check_replicas", SCRIPT)
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def never(timeout_ms: int):
        raise PlaywrightTimeout(f"Timeout {timeout_ms}ms exceeded")

    with pytest.raises(check.CheckFailed, match="student 3: opening the History tab did not happen within 2 s"):
        check.step("student 3", "opening the History tab", never, timeout_s=2)
    assert check.step("student 1", "x", lambda t: t) == check.STEP_TIMEOUT_S * 1000
