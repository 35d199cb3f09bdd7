"""bench/classroom.py: the replay check can fail, the memory trend, and a short class on a real server."""
import asyncio
import random

import pytest
from conftest import ROOT, in_own_thread

from bench import classroom
from bench.lib.client import AppClient
from bench.lib.stats import latency
from bench.lib.students import NEXT, RESET, SLIDER, UNDO, Action, Student


def test_latency_and_rss_summaries():
    assert latency([0.1, 0.3, 0.2]) == {"n": 3, "p50_ms": 200.0, "p95_ms": 300.0, "max_ms": 300.0}
    flat = classroom.rss_summary([(t, 500.0) for t in range(0, 100, 10)], warmup_s=30)
    assert flat["after_warmup_slope_mib_per_min"] == 0.0 and flat["after_warmup_first_mib"] == 500.0
    growing = classroom.rss_summary([(t, 500.0 + t) for t in range(0, 100, 10)], warmup_s=30)
    assert growing["after_warmup_slope_mib_per_min"] == 60.0


def _student(actions, seed=7):
    student = Student(0, seed, "http://127.0.0.1:1", random.Random(0))
    student.actions = actions
    return student


def test_solo_replay_accepts_what_a_session_does_and_catches_foreign_tokens(tiny):
    from autoreg_core import Session

    defaults = {}
    config = classroom.sidebar_config(defaults, 7, None)
    mirror = Session(tiny, "The cat sat")
    strips = []
    for kind in (NEXT, NEXT, UNDO, NEXT, RESET, NEXT):
        {NEXT: lambda: mirror.step(config), UNDO: mirror.undo, RESET: mirror.reset}[kind]()
        strips.append(Action(kind, 0.1, 0.0, list(mirror.generated_ids)))
    ok = classroom.replay_student(tiny, _student(strips), "The cat sat")
    assert ok["strips_checked"] == 6 and ok["mismatches"] == 0
    assert (ok["generated_at_end"], ok["cache_bytes_at_end"]) == (len(mirror.records), mirror.cache_bytes)
    other = _student(strips, seed=8)  # another student's seed: other tokens
    bad = classroom.replay_student(tiny, other, "The cat sat")
    assert bad["mismatches"] > 0 and bad["first_mismatch"]["kind"] == NEXT
    short = [*strips[:-1], Action(NEXT, 0.1, 0.0, strips[-1].tokens[:-1] + [])]  # one token lost
    assert classroom.replay_student(tiny, _student(short), "The cat sat")["mismatches"] == 1


def test_a_slider_move_changes_the_config_of_later_steps():
    config = classroom.sidebar_config({"cfg_temperature": [0.8], "cfg_top_k": 50.0, "cfg_seed": 0.0}, 3, 1.1)
    assert (config.temperature, config.top_k, config.seed) == (1.1, 50, 3)


def test_only_local_servers():
    with pytest.raises(ValueError):
        AppClient("http://example.com:8501")


@pytest.mark.integration
def test_two_students_for_a_few_seconds(embedded):
    from bench.lib.servers import free_port, local_url, start_server, stop_server

    server = start_server(ROOT / "app.py", free_port())
    try:
        students, rss, seconds = in_own_thread(asyncio.run, classroom.run_class(
            local_url(server), server.pid, n_students=2, seconds=6, period=1.0, jitter=0.2, seed=1, ramp_s=0.5))
    finally:
        stop_server(server)
    isolation = classroom.check_isolation(students)
    report = classroom.summarize(students, seconds, rss, 2.0, isolation, (0.0, 0.0, 0.0))
    assert report["students"] == 2 and report["refused_class_full"] == 0 and report["errors"] == 0
    assert report["actions_served"] == sum(len(s.actions) for s in students) > 0
    assert set(report["response_time_by_action"]) == {NEXT, SLIDER, UNDO, RESET}
    assert report["server_rss"]["samples_s_mib"] and report["server_rss"]["samples_s_mib"][0][1] > 0
    assert isolation["students_checked"] == 2 and isolation["strips_checked"] == report["actions_served"]
    assert isolation["mismatched_strips"] == 0 and isolation["every_student_equals_solo_replay"] is True
    held = isolation["sessions_at_end"]
    assert held["generated_tokens"] == sum(len(s.actions[-1].tokens) for s in students)
    assert held["kv_cache_mib"] > 0
    assert all(s.seed != students[0].seed for s in students[1:])


@pytest.mark.integration
def test_a_burst_where_three_students_press_at_once(embedded):
    from bench.lib.servers import free_port, local_url, start_server, stop_server

    server = start_server(ROOT / "app.py", free_port())
    try:
        students, rounds = in_own_thread(asyncio.run, classroom.run_burst(local_url(server), 3, rounds=2,
                                                                          pause_s=0.2, seed=2))
    finally:
        stop_server(server)
    assert [r["round"] for r in rounds] == [1, 2]
    assert all(r["last_settled_ms"] >= r["median_ms"] > 0 for r in rounds)
    assert [len(s.actions) for s in students] == [2, 2, 2] and all(a.error is None for s in students for a in s.actions)
    assert [len(s.actions[-1].tokens) for s in students] == [2, 2, 2]
    isolation = classroom.check_isolation(students)
    assert isolation["mismatched_strips"] == 0 and isolation["strips_checked"] == 6
