"""The class feed: one edition per version, built once per process, the newest pushed to every listener."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from contextlib import contextmanager

import pytest

from autoreg_server import feed


class FakeClass:
    """A class's version and removed seats, changed by the test; ``read`` and ``watch`` are the store's."""

    def __init__(self):
        self.version: int | None = 1
        self.removed: set[str] = set()
        self.changed = threading.Condition()
        self.builds: list[int | None] = []

    def set(self, version: int | None, removed=None) -> None:
        with self.changed:
            self.version = version
            if removed is not None:
                self.removed = set(removed)
            self.changed.notify_all()

    def read(self, code: str) -> int | None:
        with self.changed:
            return self.version

    @contextmanager
    def watch(self, code: str):
        yield threading.Event()  # like SQLite: nothing is heard, the watcher reads every poll_s (or when nudged)

    def build(self, code: str):
        with self.changed:
            version, removed = self.version, frozenset(self.removed)
        self.builds.append(version)
        if version is None:
            return None
        return version, {"schema": feed.SCHEMA, "code": code, "version": version}, removed


def run_async(coro):
    """``asyncio.run`` in a thread of its own: the browser tests keep a running loop in the main thread."""
    from conftest import in_own_thread

    return in_own_thread(asyncio.run, coro)


def versions(frames: list[bytes]) -> list:
    out = []
    for frame in frames:
        if frame == feed.PING:
            out.append("keep-alive")
            continue
        data = json.loads(frame.decode().split("data: ", 1)[1])
        out.append(data.get("version", "ended" if data.get("ended") else "removed" if data.get("removed") else "?"))
    return out


async def take(stream, n: int, timeout: float = 5.0) -> list[bytes]:
    frames = []
    async def pull():
        async for frame in stream:
            frames.append(frame)
            if len(frames) == n:
                return
    await asyncio.wait_for(pull(), timeout)
    return frames


@pytest.fixture
def hub_and_class():
    cls = FakeClass()
    hub = feed.FeedHub(cls.build, cls.read, cls.watch, poll_s=0.05, linger_s=0.3)
    yield hub, cls
    hub.stop()


def until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_listener_gets_the_current_edition_at_once_then_each_new_one(hub_and_class):
    hub, cls = hub_and_class

    async def run():
        stream = hub.editions("C", "s1")
        first = await take(stream, 1)
        cls.set(2)
        second = await take(stream, 1)
        cls.set(3)
        third = await take(stream, 1)
        await stream.aclose()
        return first + second + third

    assert versions(run_async(run())) == [1, 2, 3]


def test_a_listener_that_missed_versions_gets_the_newest_only(hub_and_class):
    hub, cls = hub_and_class
    feed_ = hub.feed("C")
    until(lambda: feed_.edition() is not None)

    async def run():
        stream = feed_.editions("s1", since=1)  # it has version 1 already
        for version in (2, 3, 4):
            cls.set(version)
        until(lambda: feed_.edition().version == 4)
        frames = await take(stream, 1)
        await stream.aclose()
        return frames

    assert versions(run_async(run())) == [4]


def test_a_reconnect_with_the_current_version_waits_for_the_next(hub_and_class):
    hub, cls = hub_and_class
    feed_ = hub.feed("C")
    until(lambda: feed_.edition() is not None)

    async def run():
        stream = feed_.editions("s1", since=1, keepalive_s=0.1)
        quiet = await take(stream, 1)  # nothing new: a keep-alive, not version 1 again
        cls.set(2)
        frames = await take(stream, 1)
        await stream.aclose()
        return quiet + frames

    assert versions(run_async(run())) == ["keep-alive", 2]


def test_every_listener_gets_every_step_and_each_version_is_built_once(hub_and_class):
    hub, cls = hub_and_class
    listeners = 200

    async def run():
        streams = [hub.editions("C", f"s{i % 2 + 1}") for i in range(listeners)]
        got = [versions(await take(s, 1)) for s in streams]
        for version in (2, 3):
            cls.set(version)
            for i, s in enumerate(streams):
                got[i] += versions(await take(s, 1))
        for s in streams:
            await s.aclose()
        return got

    got = run_async(run())
    assert got == [[1, 2, 3]] * listeners
    assert cls.builds == [1, 2, 3]


def test_a_removed_students_stream_ends_and_a_seated_one_goes_on(hub_and_class):
    hub, cls = hub_and_class

    async def read_all(stream, limit: int = 5) -> list[bytes]:
        frames = []
        async for frame in stream:
            frames.append(frame)
            if len(frames) == limit:
                break
        return frames

    async def run():
        removed, kept = hub.editions("C", "s1"), hub.editions("C", "s2")
        await take(removed, 1)
        await take(kept, 1)
        cls.set(2, removed={"s1"})
        gone = await asyncio.wait_for(read_all(removed), 5)
        still = await take(kept, 1)
        await kept.aclose()
        return gone, still

    gone, still = run_async(run())
    assert versions(gone) == ["removed"]  # and then the stream ended
    assert versions(still) == [2]


def test_a_seat_that_joined_after_the_edition_was_built_reads_it(hub_and_class):
    """Joining is no teacher change (no new edition): a seat the edition has never heard of is no removed one."""
    hub, cls = hub_and_class

    async def run():
        early = hub.editions("C", "s1")
        await take(early, 1)
        late = hub.editions("C", "joined-later")
        frames = await take(late, 1)
        await early.aclose()
        await late.aclose()
        return frames

    assert versions(run_async(run())) == [1]


def test_the_end_of_the_class_ends_every_stream_and_its_watcher(hub_and_class):
    hub, cls = hub_and_class

    async def run():
        stream = hub.editions("C", "s1")
        await take(stream, 1)
        cls.set(None)
        return [frame async for frame in stream]

    frames = run_async(asyncio.wait_for(run(), 5))
    assert versions(frames) == ["ended"]
    until(lambda: "C" not in hub.feeds())


def test_a_watcher_without_listeners_stops_after_lingering_and_a_new_listener_starts_another(hub_and_class):
    hub, cls = hub_and_class

    async def one_read():
        stream = hub.editions("C", "s1")
        frames = await take(stream, 1)
        await stream.aclose()
        return frames

    first = hub.feed("C")
    assert versions(run_async(one_read())) == [1]
    assert first.listeners() == 0
    until(lambda: not first.running)
    until(lambda: "C" not in hub.feeds())
    cls.set(5)
    assert versions(run_async(one_read())) == [5]
    assert hub.feed("C") is not first


def test_a_listener_keeps_the_watcher_past_the_linger_time(hub_and_class):
    hub, cls = hub_and_class

    async def run():
        stream = hub.editions("C", "s1", keepalive_s=0.1)
        await take(stream, 1)
        await asyncio.sleep(0.6)  # twice the linger time, listening all along
        cls.set(2)
        frames = await take(stream, 5)
        await stream.aclose()
        return frames

    got = versions(run_async(run()))
    assert 2 in got
    assert set(got) <= {2, "keep-alive"}


def test_the_event_carries_the_version_as_its_id():
    frame = feed.event_bytes(7, {"a": "<b>é</b>"})
    assert frame == 'retry: 1000\nid: 7\nevent: class\ndata: {"a":"<b>é</b>"}\n\n'.encode()
    assert feed.event_bytes(None, {}).startswith(b"retry: 1000\nid: \n")


def test_a_listener_arriving_as_its_feed_stops_gets_a_new_feed(hub_and_class):
    hub, cls = hub_and_class
    stale = hub.feed("C")
    until(lambda: stale.edition() is not None)
    stale.stop()
    until(lambda: "C" not in hub.feeds())

    async def run():
        stream = hub.editions("C", "s1")
        frames = await take(stream, 1)
        await stream.aclose()
        return frames

    assert versions(run_async(run())) == [1]
    assert hub.feed("C") is not stale


def test_closing_a_stream_leaves_its_feed_at_once(hub_and_class):
    hub, cls = hub_and_class

    async def run():
        stream = hub.editions("C", "s1")
        await take(stream, 1)
        joined = hub.feed("C").listeners()
        await stream.aclose()
        return joined, hub.feed("C").listeners()

    assert run_async(run()) == (1, 0)


def test_stopping_the_hub_ends_every_open_stream_and_opens_no_new_one(hub_and_class):
    hub, cls = hub_and_class

    async def run():
        streams = [hub.editions("C", "s1", keepalive_s=30), hub.editions("C", "s2", keepalive_s=30)]
        for stream in streams:
            await take(stream, 1)
        asyncio.get_running_loop().call_later(0.1, hub.stop)
        rest = [[frame async for frame in stream] for stream in streams]
        late = [frame async for frame in hub.editions("C", "s1")]
        return rest, late

    rest, late = run_async(asyncio.wait_for(run(), 5))
    assert rest == [[], []] and late == []


def test_a_nudge_reads_the_version_at_once_without_waiting_for_the_next_poll():
    cls = FakeClass()
    hub = feed.FeedHub(cls.build, cls.read, cls.watch, poll_s=30.0, linger_s=60.0)  # no poll during the test
    try:
        async def run():
            stream = hub.editions("C", "s1")
            first = await take(stream, 1)
            cls.set(2)
            hub.nudge("C")
            second = await take(stream, 1, timeout=2.0)
            await stream.aclose()
            return first + second

        assert versions(run_async(run())) == [1, 2]
    finally:
        hub.stop()


def test_without_a_nudge_a_slow_poll_leaves_the_change_unread():
    """The other side of the nudge: with a 30 s poll and no nudge, version 2 is not read within 1 s."""
    cls = FakeClass()
    hub = feed.FeedHub(cls.build, cls.read, cls.watch, poll_s=30.0, linger_s=60.0)
    try:
        async def run():
            stream = hub.editions("C", "s1", keepalive_s=0.2)
            first = await take(stream, 1)
            cls.set(2)
            later = await take(stream, 3, timeout=2.0)
            await stream.aclose()
            return first + later

        assert versions(run_async(run())) == [1, "keep-alive", "keep-alive", "keep-alive"]
    finally:
        hub.stop()


def test_a_reconnect_that_says_a_newer_version_than_this_server_has_gets_no_older_one(hub_and_class):
    """A replica that has not heard of the newest change yet sends nothing older than what the browser has."""
    hub, cls = hub_and_class

    async def run():
        stream = hub.editions("C", "s1", since=5, keepalive_s=0.1)  # the browser had 5; this server is at 1
        quiet = await take(stream, 1)
        cls.set(6)
        newer = await take(stream, 1)
        await stream.aclose()
        return quiet + newer

    assert versions(run_async(run())) == ["keep-alive", 6]


def test_a_seat_may_hold_four_streams_and_the_process_its_cap(hub_and_class):
    hub, cls = hub_and_class
    assert [hub.reserve("C", "s1") for _ in range(feed.SEAT_STREAMS + 1)] == [True] * feed.SEAT_STREAMS + [False]
    assert hub.reserve("C", "s2")  # another seat is not held up by the first one's cap
    assert not hub.reserve("C", "s3", at_most=feed.SEAT_STREAMS + 1)  # the process's cap: 5 are open
    hub.release("C", "s1")
    assert hub.reserve("C", "s1") and hub.streams() == feed.SEAT_STREAMS + 1
    for _ in range(feed.SEAT_STREAMS):
        hub.release("C", "s1")
    hub.release("C", "s2")
    assert hub.streams() == 0
