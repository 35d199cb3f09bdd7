"""deploy/check (``python -m deploy.check``), run as an operator would: two replicas behind HAProxy, 4 students,
2 clicks, and two classes (one per replica) of 3 fresh students plus one who holds the other replica's cookie.

With the cookie affinity every student stays on one replica and every download comes from the replica
that made it; without it, downloads land on the wrong replica: the run proves the check can fail. With the
class rules every member of a class reaches the replica whose tag starts the class code; without them (or
without the cookie that carries a class link's choice on to the page's websocket) students land on the other
replica and are refused.
"""
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


def _run(*extra: str, students: str = "4", clicks: str = "2", class_students: str = "3") -> dict:
    if not Path(HAPROXY).exists():
        pytest.skip("haproxy is not installed: Debian's 'haproxy' package (make test installs it when it can)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    done = subprocess.run([sys.executable, "-m", "deploy.check", "--students", students, "--clicks", clicks,
                           "--class-students", class_students, *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    ARTIFACTS.mkdir(exist_ok=True)
    name = "replicas-" + ("-".join(e.lstrip("-") for e in extra) or "affinity") + ".json"
    (ARTIFACTS / name).write_text(done.stdout)
    assert done.stdout.strip(), done.stderr[-2000:]
    return json.loads(done.stdout)


def _other(replica: str) -> str:
    return {"r1": "r2", "r2": "r1"}[replica]


def _seats(out: dict) -> list[tuple[dict, dict]]:
    return [(c, s) for c in out["class"]["classes"] for s in c["students"]]


def test_with_affinity_every_student_stays_on_one_replica():
    out = _run()
    assert out["failed_step"] is None, out["failed_step"]
    assert out["per_replica"] == {"r1": 2, "r2": 2} and out["spread_across_both"]
    assert [s["tokens_seen"] for s in out["students"]] == [[1, 2]] * 4
    assert [s["csv_rows"] for s in out["students"]] == [[2, 2]] * 4
    assert out["downloads_from_the_right_replica"] == "8/8" and out["every_session_stayed_put"] is True

    # the class check: one class per replica (the second teacher's first request landed on the other one)
    c = out["class"]
    assert c["class_routing"] is True and c["replica_tags"] == {"r1": "A", "r2": "B"}
    assert [cl["held_by"] for cl in c["classes"]] in (["r1", "r2"], ["r2", "r1"]) and c["classes_on_both_replicas"]
    for cl in c["classes"]:
        held = cl["held_by"]
        assert cl["code"].startswith(c["replica_tags"][held]) and cl["teacher"]["replica"] == held
        assert cl["join_link"].endswith(f"/?class={cl['code']}") and cl["join_link"].startswith("http://127.0.0.1:")
        assert cl["teacher"]["sees"].startswith("4 joined · 4 following")
        assert len(cl["teacher"]["token_ids"]) > 2  # the prompt and the two steps
        assert [s["came_with_cookie"] for s in cl["students"]] == [None, None, None, _other(held)]
        assert cl["per_replica"] == {held: 4, _other(held): 0}
    for cl, s in _seats(out):
        # the join page, the balancer's cookie and the websocket (the session) all on the class's replica,
        # also for the student who came with the other replica's cookie
        assert (s["page_from"], s["cookie"], s["websocket_to"]) == (cl["held_by"],) * 3, s
        assert s["joined"] and s["refused_with"] is None, s
        assert s["teacher_tokens_seen"] == 2 and s["sees_teacher_tokens"] is True, s
    assert c["students_on_the_wrong_replica"] == 0
    assert c["class_on_one_replica"] is True and c["class_students_following"] is True


def test_without_affinity_the_check_shows_requests_reaching_the_wrong_replica():
    out = _run("--without-affinity")
    assert out["failed_step"] is None, out["failed_step"]
    assert len(out["students"]) == 4 and all(s["replica"] is None for s in out["students"])  # no cookie
    rows = [r for s in out["students"] for r in s["csv_rows"]]
    assert len(rows) == 8 and None in rows  # two downloads in a row alternate between the replicas
    assert out["every_session_stayed_put"] is False

    # the class rules still send the join page to the class's replica, but the page's websocket has nothing
    # to follow: a student is let in exactly when it happens to reach the replica holding the class
    c = out["class"]
    assert c["classes_on_both_replicas"] and len(_seats(out)) == 8
    for cl, s in _seats(out):
        assert s["page_from"] == cl["held_by"], s
        assert s["cookie"] == s["came_with_cookie"], s  # the balancer sets no cookie of its own
        assert s["joined"] == (s["websocket_to"] == cl["held_by"]) == s["sees_teacher_tokens"], s
    assert c["class_on_one_replica"] == (c["students_on_the_wrong_replica"] == 0)
    assert c["class_students_following"] == c["class_on_one_replica"]


def test_without_class_routing_a_class_is_split_across_the_replicas():
    out = _run("--without-class-routing", students="2", clicks="1", class_students="2")
    assert out["failed_step"] is None, out["failed_step"]
    assert out["every_session_stayed_put"] is True  # the cookie affinity is still there
    c = out["class"]
    assert c["class_routing"] is False and c["classes_on_both_replicas"]
    for cl in c["classes"]:
        back = cl["students"][-1]  # came with the other replica's cookie: nothing sends it to the class now
        assert back["came_with_cookie"] == _other(cl["held_by"])
        assert (back["page_from"], back["websocket_to"]) == (back["came_with_cookie"],) * 2, back
        assert back["joined"] is False and "no open class with this code" in back["refused_with"], back
    for cl, s in _seats(out):
        assert s["page_from"] == s["cookie"] == s["websocket_to"], s  # affinity keeps each tab on one replica
        assert s["joined"] == (s["websocket_to"] == cl["held_by"]) == s["sees_teacher_tokens"], s
    assert c["students_on_the_wrong_replica"] >= 2
    assert c["class_on_one_replica"] is False and c["class_students_following"] is False


def test_the_check_config_strips_exactly_the_rules_each_mode_drops():
    from deploy.check import haproxy as check

    template = (ROOT / "deploy" / "haproxy.cfg").read_text()
    rules = ("ignore-persist if { urlp(class) -m found }", "use-server r1 if { urlp(class) -m beg -i A }",
             "use-server r2 if { urlp(class) -m beg -i B }", "Set-Cookie \"AUTOREG_REPLICA=%s")
    full = check.haproxy_config(template, 8080, [9001, 9002])
    assert all(rule in full for rule in rules)
    assert "http-response set-header X-Autoreg-Server %s" in full and "replica1:" not in full
    assert "server r1 127.0.0.1:9001 check cookie r1" in full and "bind 127.0.0.1:8080" in full
    no_class = check.haproxy_config(template, 8080, [9001, 9002], class_routing=False)
    assert not any(rule in no_class for rule in rules) and "txn.class_link" not in no_class
    assert "cookie AUTOREG_REPLICA insert" in no_class and "check cookie r1" in no_class
    no_cookie = check.haproxy_config(template, 8080, [9001, 9002], affinity=False)
    settings = "".join(line for line in no_cookie.splitlines(keepends=True) if not line.lstrip().startswith("#"))
    assert "AUTOREG_REPLICA" not in settings and " cookie " not in settings
    assert all(rule in no_cookie for rule in rules[:3])
    with pytest.raises(RuntimeError, match="no use-server rule per replica tag"):
        check.haproxy_config(template.replace("-m beg -i B", "-m beg -i C"), 8080, [9001, 9002])
    if Path(HAPROXY).exists():
        for cfg in (full, no_class, no_cookie):
            done = subprocess.run([HAPROXY, "-c", "-f", "/dev/stdin"], input=cfg, capture_output=True, text=True,
                                  timeout=30)
            assert done.returncode == 0, done.stdout + done.stderr


def test_a_step_that_does_not_happen_names_the_student_and_the_step():
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from deploy.check import steps as check

    def never(timeout_ms: int):
        raise PlaywrightTimeout(f"Timeout {timeout_ms}ms exceeded")

    with pytest.raises(check.CheckFailed, match="student 3: opening the History tab did not happen within 2 s"):
        check.step("student 3", "opening the History tab", never, timeout_s=2)
    assert check.step("student 1", "x", lambda t: t) == check.STEP_TIMEOUT_S * 1000
