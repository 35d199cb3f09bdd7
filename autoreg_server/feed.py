"""A class's live feed: one small document per teacher change, built once in this process and pushed to every
follower's open connection (server-sent events), instead of every follower's page rerunning to find it.

Each class a follower of this process listens to has one ``ClassFeed``: one watcher thread that reads the
class's version when woken (PostgreSQL's ``NOTIFY`` wakes it, across replicas; a teacher's tab in this process
wakes it as it publishes, ``FeedHub.nudge``) and at least every ``poll_s`` (another SQLite server's teacher),
builds the follower's view once per version (``build``, given by the UI: the prompt, the tokens, the last
step's bars, what the class is doing), and hands the new ``Edition`` to the connections. A connection holds
nothing but the last version it sent; one that missed versions gets the newest, never a stale one, and one that
reconnects gets the current edition at once.

Who may read is decided at the door (the route lets in only a seat of the class, checked once) and at every
edition (it carries the seats the teacher removed: a removed student's stream ends; a removal is a teacher's
change, so it makes an edition). The teacher's key never travels here.

Pure Python and asyncio: the server's event loop waits on ``Edition``s; the watcher threads never touch it but
through ``loop.call_soon_threadsafe``.
"""
from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

SCHEMA = 1  # the document's layout; a client that does not know it reloads its page
KEEPALIVE_S = 15.0  # a ping event this often keeps proxies from closing a quiet stream, and tells the page it lives
SEAT_STREAMS = 4  # open streams per seat (a phone and a laptop, a reload's overlap); more are refused
MAX_STREAMS = 8192  # open streams per server process
RETRY_MS = 1000  # how soon a browser reconnects after losing the stream (its own default is about 3 s)
POLL_S = 0.2  # a watcher reads the version at least this often (one indexed read per class and process)
LINGER_S = 30.0  # a watcher with no listener stays this long (a phone's reconnect finds its edition ready)


@dataclass(frozen=True)
class Edition:
    """One version of a class's feed, as every follower receives it."""

    version: int | None  # the class store's version it was built at; None: the class has ended
    body: bytes  # the whole server-sent event, encoded once for every connection
    removed: frozenset[str] = field(default_factory=frozenset)  # the seats the teacher removed, at this version

    @property
    def ended(self) -> bool:
        return self.version is None


def event_bytes(version: int | None, document: dict[str, Any]) -> bytes:
    """One server-sent event: the version as its id (a reconnecting browser sends it back), the JSON as data."""
    data = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return (f"retry: {RETRY_MS}\nid: {'' if version is None else version}\nevent: class\ndata: {data}\n\n").encode()


def ended_edition() -> Edition:
    return Edition(None, event_bytes(None, {"schema": SCHEMA, "ended": True}))


Read = Callable[[str], "int | None"]
"""The class's version now (None: the class is gone)."""
Watch = Callable[[str], "AbstractContextManager[threading.Event]"]
"""While held, an event the store sets when it hears that the class changed (PostgreSQL's NOTIFY); SQLite's
never is."""
Build = Callable[[str], "tuple[int, dict, frozenset[str]] | None"]
"""The follower's view of class ``code`` now: (the version it was built at, the document, the removed seats), or
None when the class is gone."""


class ClassFeed:
    """One class's newest edition, its watcher thread and the event loops waiting on it."""

    def __init__(self, code: str, build: Build, read: Read, watch: Watch, on_idle: Callable[[ClassFeed], None],
                 poll_s: float = POLL_S, linger_s: float = LINGER_S):
        self.code = code
        self._build = build
        self._read = read
        self._watch_store = watch
        self._on_idle = on_idle
        self._poll_s = poll_s
        self._woken = threading.Event()  # set by a nudge (and, on PostgreSQL, by the class's NOTIFY)
        self._linger_s = linger_s
        self._lock = threading.Lock()
        self._edition: Edition | None = None
        self._listeners = 0
        self._idle_since: float | None = time.monotonic()  # a feed nobody joins stops too
        self._loops: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}
        self._closing = False  # stopped from outside: the streams end too (an idle stop leaves none to end)
        self.builds = 0  # editions built (one per version this process saw)
        self._thread = threading.Thread(target=self._watch, name=f"autoreg-feed-{code}", daemon=True)
        self._stopped = threading.Event()

    # ------------------------------------------------------------ the watcher thread
    def start(self) -> None:
        self._thread.start()

    def _watch(self) -> None:
        version: int | None = None
        built = False
        try:
            with self._watch_store(self.code) as notified:
                self._woken = notified
                while not self._stopped.is_set():
                    try:
                        now = self._read(self.code)
                        if not built or now != version:
                            edition = self._make()
                            version, built = edition.version, True
                            self._publish(edition)
                            if edition.ended:
                                break
                    except Exception as exc:  # noqa: BLE001 - a failed read or build is tried again
                        log.warning("class feed %s: %s", self.code, exc)
                        self._stopped.wait(1.0)
                    if self._idle_too_long():
                        break
                    notified.wait(self._poll_s)
                    notified.clear()
        finally:
            self._stopped.set()
            self._on_idle(self)

    def nudge(self) -> None:
        """Read the version now (the teacher's tab in this process has just changed the class)."""
        self._woken.set()

    def _make(self) -> Edition:
        built = self._build(self.code)
        self.builds += 1
        if built is None:
            return ended_edition()
        version, document, removed = built
        return Edition(version, event_bytes(version, document), frozenset(removed))

    def _idle_too_long(self) -> bool:
        """Whether nobody listened for ``linger_s``: then the feed stops, decided under the lock a listener
        joins under, so no listener joins a feed that has stopped (``_join`` says None)."""
        with self._lock:
            if self._listeners == 0 and self._idle_since is not None and \
                    time.monotonic() - self._idle_since >= self._linger_s:
                self._stopped.set()
            return self._stopped.is_set()

    def _publish(self, edition: Edition) -> None:
        with self._lock:
            self._edition = edition
        self._wake_listeners()

    def _wake_listeners(self) -> None:
        with self._lock:
            loops = list(self._loops.items())
        for loop, event in loops:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop has closed (the server stopping)
                pass

    def stop(self) -> None:
        """The watcher ends, and so does every stream of this feed (the server is stopping)."""
        with self._lock:
            self._stopped.set()
            self._closing = True
        self._wake_listeners()

    @property
    def running(self) -> bool:
        return not self._stopped.is_set()

    # ------------------------------------------------------------ the connections
    def edition(self) -> Edition | None:
        with self._lock:
            return self._edition

    def listeners(self) -> int:
        with self._lock:
            return self._listeners

    def _join(self, loop: asyncio.AbstractEventLoop) -> asyncio.Event | None:
        with self._lock:
            if self._stopped.is_set():
                return None
            self._listeners += 1
            self._idle_since = None
            return self._loops.setdefault(loop, asyncio.Event())

    def _leave(self) -> None:
        with self._lock:
            self._listeners -= 1
            if self._listeners == 0:
                self._idle_since = time.monotonic()

    async def editions(self, seat: str, since: int | None = None,
                       keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[bytes]:
        """What one follower's stream sends: the current edition at once (unless it is ``since``, the version
        the browser last had), then each newer one, a keep-alive comment when nothing moved for
        ``keepalive_s``; the stream ends with the class or the seat (removed). A feed that has stopped sends
        nothing: ``FeedHub.editions`` listens to a running one."""
        loop = asyncio.get_running_loop()
        changed = self._join(loop)
        if changed is None:
            return
        sent = since
        try:
            while True:
                if self._closing:
                    return
                edition = self.edition()
                if edition is not None and (edition.ended or seat in edition.removed):
                    yield edition.body if edition.ended else removed_body()
                    return
                if edition is not None and (sent is None or edition.version > sent):  # never an older one
                    sent = edition.version
                    yield edition.body
                    continue
                changed.clear()
                if self.edition() is not edition:  # published between the read and the clear
                    continue
                try:
                    await asyncio.wait_for(changed.wait(), keepalive_s)
                except TimeoutError:
                    yield PING
        finally:
            self._leave()


PING = b"event: ping\ndata: {}\n\n"  # an event, not a comment: the page sees it, and knows the stream is alive


def removed_body() -> bytes:
    return event_bytes(None, {"schema": SCHEMA, "removed": True})


class FeedHub:
    """Every class feed of this process: one watcher per class with listeners (and for ``linger_s`` after)."""

    def __init__(self, build: Build, read: Read, watch: Watch, poll_s: float = POLL_S, linger_s: float = LINGER_S):
        self._build = build
        self._read = read
        self._watch = watch
        self._poll_s = poll_s
        self._linger_s = linger_s
        self._lock = threading.Lock()
        self._feeds: dict[str, ClassFeed] = {}
        self._closed = False
        self._open: dict[tuple[str, str], int] = {}  # (code, seat) → its open streams

    def reserve(self, code: str, seat: str, per_seat: int = SEAT_STREAMS, at_most: int = MAX_STREAMS) -> bool:
        """Count one more stream of ``seat`` in class ``code`` if it has fewer than ``per_seat`` open and the
        process fewer than ``at_most`` (a seat could otherwise hold the server's sockets); False: refused. Checked
        and counted at once, under the lock, so streams opened together cannot all slip under the cap. The
        caller ``release``s it when its response has ended, however it ended."""
        with self._lock:
            if self._open.get((code, seat), 0) >= per_seat or sum(self._open.values()) >= at_most:
                return False
            self._open[(code, seat)] = self._open.get((code, seat), 0) + 1
            return True

    def release(self, code: str, seat: str) -> None:
        with self._lock:
            left = self._open.get((code, seat), 0) - 1
            if left > 0:
                self._open[(code, seat)] = left
            else:
                self._open.pop((code, seat), None)

    def streams(self) -> int:
        with self._lock:
            return sum(self._open.values())

    def feed(self, code: str) -> ClassFeed:
        """The class's feed, its watcher started on first use (or again, after it stopped)."""
        with self._lock:
            held = self._feeds.get(code)
            if held is not None and held.running:
                return held
            feed = ClassFeed(code, self._build, self._read, self._watch, self._forget, self._poll_s, self._linger_s)
            self._feeds[code] = feed
        feed.start()
        return feed

    async def editions(self, code: str, seat: str, since: int | None = None,
                       keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[bytes]:
        """One follower's stream of class ``code`` (``ClassFeed.editions``), from a feed that is running."""
        while not self._closed:
            feed = self.feed(code)
            stream = feed.editions(seat, since, keepalive_s)
            try:
                first = await anext(stream, None)
                if first is None and not feed.running:
                    continue  # it stopped just before this listener joined: the next turn starts a new one
                if first is None:
                    return
                yield first
                async for frame in stream:
                    yield frame
                return
            finally:
                await stream.aclose()  # the listener leaves at once when the connection goes

    def nudge(self, code: str) -> None:
        """Class ``code`` changed (its teacher's tab in this process published): its feed, if any, reads now."""
        with self._lock:
            feed = self._feeds.get(code)
        if feed is not None:
            feed.nudge()

    def _forget(self, feed: ClassFeed) -> None:
        with self._lock:
            if self._feeds.get(feed.code) is feed:
                del self._feeds[feed.code]

    def feeds(self) -> dict[str, ClassFeed]:
        with self._lock:
            return dict(self._feeds)

    def stop(self) -> None:
        """Every watcher and every stream ends, for good: the server is stopping (an open stream would hold
        its shutdown, which waits for every response to end)."""
        with self._lock:
            self._closed = True
        for feed in self.feeds().values():
            feed.stop()
