"""bench/class_follow.py: the report counts what it saw, and a short class follows its teacher on a real server."""
import asyncio

import pytest
from conftest import ROOT, in_own_thread

from bench import class_follow


def _follower(updates, replica: int = 0, seat: str = "seat"):
    return class_follow.Follower(0, seat, updates=updates, replica=replica)


def test_the_report_measures_each_change_to_each_followers_first_equal_text():
    steps = [(10.0, [5]), (13.0, [5, 6]), (16.0, [])]  # two steps, then a reset
    on_time = _follower([(10.4, [5]), (13.9, [5, 6]), (16.5, [])])
    skipped = _follower([(14.5, [5, 6]), (17.0, [])])  # never received the first step's text
    wrong = _follower([(10.2, [7]), (13.5, [7, 6]), (16.2, [])])  # received other tokens before the reset
    out = class_follow.report(steps, [on_time, skipped, wrong], [], 0.2, 10.0, 4.0, 20.0, 1.5)
    assert out["teacher_steps"] == 3 and out["follower_updates"] == 9 and out["missed_updates"] == 0
    assert out["texts_not_equal_to_the_teachers"] == 3  # skipped's first, wrong's first two
    assert out["texts_matching_no_teacher_step"] == 2  # wrong's [7] and [7, 6]; skipped only skipped
    assert out["delay_click_to_follower"]["max_ms"] == pytest.approx(4500.0)  # skipped: its next text
    assert out["server_cpu"]["idle_streams_s_per_s"] == 0.02
    # beyond the idle streams (0.02 s/s for 20 s) and the teacher's own steps (1.5 s): 2.1 s over 9 updates
    assert out["server_cpu"]["per_follower_update_ms"] == pytest.approx((4.0 - 0.02 * 20.0 - 1.5) / 9 * 1000,
                                                                        abs=0.001)
    missing = class_follow.report(steps, [_follower([])], [], None, 1.0, None, 1.0, None)
    assert missing["missed_updates"] == 3 and missing["follower_updates"] == 0
    assert missing["server_cpu"]["per_follower_update_ms"] is None


def test_delays_per_replica_and_the_goals():
    steps = [(10.0, [5]), (13.0, [5, 6])]
    near = _follower([(10.1, [5]), (13.2, [5, 6])], replica=0, seat="a")
    far = _follower([(10.3, [5]), (13.9, [5, 6])], replica=1, seat="b")
    out = class_follow.report(steps, [near, far], [], 0.0, 1.0, 0.1, 1.0, 0.1)
    assert out["delay_per_replica"]["r1"]["max_ms"] == pytest.approx(200.0)
    assert out["delay_per_replica"]["r2"]["max_ms"] == pytest.approx(900.0)
    verdict = class_follow.goal(out, 2, "postgres")
    assert verdict["every_step_reached_every_follower_with_the_same_text"]
    assert not verdict["lecture"]["p95_within_goal"] and not verdict["lecture"]["met"]  # 0.9 s > 0.5 s
    out["delay_click_to_follower"]["p95_ms"] = 500.0  # at the goal: within it
    assert class_follow.goal(out, 2, "postgres")["lecture"]["p95_within_goal"]
    assert not class_follow.goal(out | {"followers": 120}, 2, "sqlite")["lecture"]["met"]
    assert class_follow.goal(out | {"followers": 120}, 2, "postgres")["lecture"]["met"]
    out["delay_click_to_follower"]["p95_ms"] = 501.0  # just past it
    assert not class_follow.goal(out | {"followers": 120}, 2, "postgres")["lecture"]["met"]


def test_the_halls_goal_needs_a_thousand_followers_the_delay_and_the_cpu():
    steps = [(10.0, [5])]
    out = class_follow.report(steps, [_follower([(10.2, [5])])], [], 0.0, 1.0, 0.1, 1.0, 0.1)
    many = out | {"followers": 1000}
    many["server_cpu"] = dict(out["server_cpu"], per_follower_update_ms=0.5)
    assert class_follow.goal(many, 1, "sqlite")["hall"]["met"]
    assert not class_follow.goal(out, 1, "sqlite")["hall"]["met"]  # one follower is not a thousand
    assert not class_follow.goal(many, 2, "sqlite")["hall"]["met"]  # one server
    over = many | {"server_cpu": dict(many["server_cpu"], per_follower_update_ms=0.501)}
    assert not class_follow.goal(over, 1, "sqlite")["hall"]["cpu_within_goal"]
    late = many | {"delay_click_to_follower": dict(many["delay_click_to_follower"], p95_ms=501.0)}
    assert not class_follow.goal(late, 1, "sqlite")["hall"]["met"]


def test_a_follower_reads_the_generated_ids_of_an_edition():
    assert class_follow.generated('{"schema":1,"text":{"strip":"x]","generated":[5,17,2],"step":null}}') == [5, 17, 2]
    assert class_follow.generated('{"schema":1,"text":{"generated":[],"step":null}}') == []
    assert class_follow.generated('{"schema":1,"text":null}') == []
    assert class_follow.generated('{"schema":1,"ended":true}') is None
    assert class_follow.generated('{"schema":1,"removed":true}') is None


def test_the_sse_client_reads_events_across_chunks_and_skips_keep_alives():
    import asyncio

    from bench.lib import sse

    body = (b'id: 3\nevent: class\ndata: {"a":1}\n\n', b": keep-alive\n\n", b"id: 4\nevent: cl",
            b'ass\ndata: {"a":2}\n\n')
    wire = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in body) + b"0\r\n\r\n"

    async def read():
        reader = asyncio.StreamReader()
        reader.feed_data(wire)
        reader.feed_eof()
        return [event async for event in sse.events(reader)]

    assert asyncio.run(read()) == [sse.Event("3", "class", '{"a":1}'), sse.Event("4", "class", '{"a":2}')]


@pytest.mark.integration
def test_two_followers_see_every_step_of_a_short_class(embedded, tmp_path, monkeypatch):
    from bench.lib.servers import free_port, local_url, start_server, stop_server

    db = tmp_path / "classes.sqlite3"
    server = start_server(ROOT / "app.py", free_port(), env={"AUTOREG_CLASS_DB": str(db)})
    try:
        out = in_own_thread(asyncio.run, class_follow.run(local_url(server), db, 2, seconds=5, period=2.0,
                                                          idle_s=2.0, pid=server.pid, alone=2))
    finally:
        stop_server(server)
    assert out["errors"] == 0, out["error_examples"]
    assert out["teacher_steps"] >= 2 and out["missed_updates"] == 0
    assert out["follower_updates"] == 2 * out["teacher_steps"]
    assert out["texts_not_equal_to_the_teachers"] == 0
    assert out["teacher_alone"]["steps"] == 2 and out["server_memory"]["per_follower_kib"] is not None
