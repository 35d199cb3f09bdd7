"""bench/class_follow.py: the report counts what it saw, and a short class follows its teacher on a real server."""
import asyncio

import pytest
from conftest import ROOT, in_own_thread

from bench import class_follow


def _follower(updates):
    return class_follow.Follower(0, "seat", client=None, updates=updates)


def test_the_report_measures_each_change_to_each_followers_first_equal_strip():
    steps = [(10.0, [5]), (13.0, [5, 6]), (16.0, [])]  # two steps, then a reset
    on_time = _follower([(10.4, [5]), (13.9, [5, 6]), (16.5, [])])
    skipped = _follower([(14.5, [5, 6]), (17.0, [])])  # never drew the first step's strip
    wrong = _follower([(10.2, [7]), (13.5, [7, 6]), (16.2, [])])  # drew other tokens before the reset
    out = class_follow.report(steps, [on_time, skipped, wrong], [], 0.2, 10.0, 10, 4.0, 20.0)
    assert out["teacher_steps"] == 3 and out["follower_updates"] == 9 and out["missed_updates"] == 0
    assert out["strips_not_equal_to_the_teachers"] == 3  # skipped's first, wrong's first two
    assert out["strips_matching_no_teacher_step"] == 2  # wrong's [7] and [7, 6]; skipped only skipped
    assert out["delay_click_to_follower_page"]["max_ms"] == pytest.approx(4500.0)  # skipped: its next strip
    assert out["server_cpu"]["idle_polling_s_per_s"] == 0.02
    assert out["server_cpu"]["per_follower_update_ms"] == pytest.approx((4.0 - 0.02 * 20.0) / 9 * 1000, abs=0.1)
    missing = class_follow.report(steps, [_follower([])], [], None, 1.0, 0, None, 1.0)
    assert missing["missed_updates"] == 3 and missing["follower_updates"] == 0


def test_the_next_poll_follows_the_browsers_fixed_interval():
    """setInterval(1 s) from 100.0: ticks at 101, 102, ...; a request that comes while a poll runs waits for it."""
    assert class_follow.next_poll(101.0, 101.8, 100.0, 1.0) == 102.0  # ended before the next tick: wait for it
    assert class_follow.next_poll(101.0, 102.3, 100.0, 1.0) == 102.3  # the tick came while it ran: at once
    assert class_follow.next_poll(101.0, 104.5, 100.0, 1.0) == 104.5  # several ticks coalesce into one run
    assert class_follow.next_poll(102.3, 102.9, 100.0, 1.0) == 103.0  # a queued run keeps the grid
    assert class_follow.next_poll(101.0, 101.999, 100.0, 1.0) == 102.0


def test_delays_per_replica_and_the_lecture_goal():
    steps = [(10.0, [5]), (13.0, [5, 6])]
    near = class_follow.Follower(0, "a", client=None, updates=[(10.5, [5]), (13.5, [5, 6])], replica=0)
    far = class_follow.Follower(1, "b", client=None, updates=[(11.0, [5]), (15.5, [5, 6])], replica=1)
    out = class_follow.report(steps, [near, far], [], None, 1.0, 0, None, 1.0)
    assert out["delay_per_replica"]["r1"]["max_ms"] == pytest.approx(500.0)
    assert out["delay_per_replica"]["r2"]["max_ms"] == pytest.approx(2500.0)
    verdict = class_follow.goal(out, 2, "postgres")
    assert verdict["every_step_reached_every_follower_with_the_same_text"] and not verdict["p95_within_goal"]
    assert not verdict["met"]  # 2.5 s > 2 s, and 2 followers are not 120
    out["delay_click_to_follower_page"]["p95_ms"] = 1900.0
    assert class_follow.goal(out, 2, "postgres")["p95_within_goal"]
    assert not class_follow.goal(out | {"followers": 120}, 2, "sqlite")["met"]
    assert class_follow.goal(out | {"followers": 120}, 2, "postgres")["met"]


@pytest.mark.integration
def test_two_followers_see_every_step_of_a_short_class(embedded, tmp_path, monkeypatch):
    from bench.lib.servers import free_port, local_url, start_server, stop_server

    db = tmp_path / "classes.sqlite3"
    server = start_server(ROOT / "app.py", free_port(), env={"AUTOREG_CLASS_DB": str(db)})
    try:
        out = in_own_thread(asyncio.run, class_follow.run(local_url(server), db, 2, seconds=5, period=2.0,
                                                          idle_s=2.0, pid=server.pid))
    finally:
        stop_server(server)
    assert out["errors"] == 0, out["error_examples"]
    assert out["teacher_steps"] >= 2 and out["missed_updates"] == 0
    assert out["follower_updates"] == 2 * out["teacher_steps"]
    assert out["strips_not_equal_to_the_teachers"] == 0
    assert out["server_cpu"]["polls_while_idle"] >= 2
