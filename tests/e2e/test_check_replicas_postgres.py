"""python -m deploy.check --class-db postgres, run as an operator would: a throwaway PostgreSQL, two replicas
on it, HAProxy with deploy/haproxy-shared.cfg (cookie stickiness, no class routing). One class: the teacher on
one replica, four students pinned two to each; every student follows, guesses and draws; the replica without
the teacher restarts mid-lesson, its students come back to the same seat, and everyone follows the next step;
PostgreSQL holds every seat, guess and draw it held before."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, CHROMIUM

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def test_one_class_across_both_replicas_on_postgresql_survives_a_restart():
    from bench.lib import postgres

    if postgres.server_bin() is None:
        pytest.skip("PostgreSQL's server is not installed: Debian's 'postgresql' (make test installs it when it can)")
    if not Path(HAPROXY).exists():
        pytest.skip("haproxy is not installed: Debian's 'haproxy' package (make test installs it when it can)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    # One retry of the whole check when a step timed out: seen once in three full runs on a loaded 2-core machine
    # ("drawing for the round" on the replica without the teacher; cause not found yet). Both runs are kept.
    ARTIFACTS.mkdir(exist_ok=True)
    for attempt in (1, 2):
        done = subprocess.run([sys.executable, "-m", "deploy.check", "--class-db", "postgres", "--class-students", "4"],
                              cwd=ROOT, capture_output=True, text=True, timeout=400)
        (ARTIFACTS / f"replicas-postgres-{attempt}.json").write_text(done.stdout)
        assert done.stdout.strip(), done.stderr[-2000:]
        out = json.loads(done.stdout)
        if out["failed_step"] is None or "did not happen within" not in out["failed_step"]:
            break
    assert out["failed_step"] is None, out["failed_step"]
    lesson = out["lesson"]
    teacher, restarted = lesson["teacher"]["replica"], lesson["restarted"]
    assert {teacher, restarted} == {"r1", "r2"}  # the restarted replica is the one without the teacher
    assert lesson["per_replica"] == {"r1": 2, "r2": 2} and lesson["students_on_both_replicas"]
    assert lesson["teacher"]["sees"].startswith("4 joined · 4 following")
    students = lesson["students"]
    assert len(students) == 4 and all(s["joined"] and s["refused_with"] is None for s in students)
    for s in students:
        # every student's session stays on the replica its cookie names; a student of the restarted replica may be
        # served by either after it (the balancer moves them while it is down: with PostgreSQL any replica serves
        # any student), the others stay put
        assert s["cookie"] == s["websocket_to"] == s["came_with_cookie"]
        assert s["replica_after"] in ({"r1", "r2"} if s["websocket_to"] == restarted else {s["websocket_to"]})
        assert s["before_restart"] == {"tokens_seen": 2, "same_text_as_teacher": True}
        assert s["after_restart"] == {"tokens_seen": lesson["teacher"]["steps"], "same_text_as_teacher": True}
        assert s["guessed"] and s["drew"]
        assert s.get("same_seat_after_restart", True) and ("same_seat_after_restart" in s) == (
            s["websocket_to"] == restarted)
    before, after = lesson["stored_before"], lesson["stored_after"]
    assert len(before["seats"]) == 4 and after["seats"] == before["seats"]
    assert len(before["guesses"]) == 4 and after["guesses"] == before["guesses"]
    assert len(before["draws"]) == 4 and after["draws"] == before["draws"]
    # the teacher's last step (taken after the restart) is in the class's recipe, and everything before it
    assert after["steps"] == lesson["teacher"]["steps"] >= 3 and before["steps"] < after["steps"]
    assert after["version"] > before["version"]
    assert lesson["nothing_lost"] and lesson["every_student_followed"] and out["ok"] is True
