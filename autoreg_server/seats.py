"""Seats: which browser tabs a server is serving now, with a cap, and the idle ones freed.

One server holds every student's session in its own memory and shares its cores between their clicks. Past
some number of students everyone gets slow, so the operator sets a number of **seats** (``AUTOREG_MAX_SESSIONS``);
a tab that arrives when all are taken is refused (the app shows it a "the class is full, try again" page). A
seat is freed when its tab closes (the liveness check says so) or after ``AUTOREG_IDLE_MINUTES`` without a
click; an idle tab's generation is also cleared then (its KV cache and step records: the memory goes back), and
the tab is told why when it comes back.

Plain Python with an injectable clock and liveness check: the UI (``autoreg_ui.limits``) asks Streamlit which
tabs are alive and draws the pages; this module keeps the count.
"""
from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from autoreg_server import settings
from autoreg_server.settings import Settings

SWEEP_EVERY_S = 30.0  # how often idle tabs are looked for when nobody clicks
RUN_SWEEP_EVERY_S = 1.0  # while tabs run: at most one sweep a second (``Seats.admit``)
MAX_CLEARED = 1024  # cleared tabs remembered (to tell a learner who comes back why); the oldest go first


@dataclass(frozen=True)
class Limits:
    max_sessions: int = 30  # 0 = no cap
    idle_minutes: float = 20.0  # 0 = never
    max_new_tokens: int = 512
    max_race_length: int = 2048

    @property
    def idle_seconds(self) -> float | None:
        return self.idle_minutes * 60.0 if self.idle_minutes > 0 else None

    @classmethod
    def from_settings(cls, served: Settings) -> Limits:
        """The operator's seats and caps (``AUTOREG_MAX_SESSIONS``, ``AUTOREG_IDLE_MINUTES``,
        ``AUTOREG_MAX_NEW_TOKENS``, ``AUTOREG_MAX_RACE_LENGTH``)."""
        return cls(max_sessions=served.max_sessions, idle_minutes=served.idle_minutes,
                   max_new_tokens=served.max_new_tokens, max_race_length=served.max_race_length)


@dataclass(frozen=True)
class Admission:
    admitted: bool
    returning_after_idle: bool = False  # this tab's generation was cleared while it was away
    in_use: int = 0  # seats taken, this tab included when admitted


@dataclass
class _Seat:
    last_active: float
    sessions: weakref.WeakSet  # the tab's autoreg Sessions, cleared when it goes idle
    on_path: bool = False  # a teacher's tab following a lesson path: kept for the whole lesson, never idle


class Seats:
    """Which tabs hold a seat, keyed by Streamlit's session id. Thread-safe.

    ``clock`` gives seconds (monotonic); ``is_alive(session_id)`` says whether Streamlit still has
    the tab (closed tabs give their seat back at the next sweep).
    """

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic,
                 is_alive: Callable[[str], bool] | None = None):
        self.limits = limits
        self._clock = clock
        self._is_alive = is_alive or (lambda _sid: True)
        self._lock = threading.Lock()
        self._seats: dict[str, _Seat] = {}
        self._cleared: OrderedDict[str, None] = OrderedDict()  # tabs cleared while idle, newest last (bounded)
        self._swept_at: float | None = None  # the clock at the last sweep

    @property
    def in_use(self) -> int:
        with self._lock:
            return len(self._seats)

    def admit(self, session_id: str) -> Admission:
        """A script run of this tab: keep or give it a seat (refused when all are taken).

        The sweep looks at every seat, so it runs at most once per ``RUN_SWEEP_EVERY_S`` (a lecture's 60 tabs on one
        server, each redrawn on every teacher step, made it 60 × 60 looks per step), and at once before a new tab
        would be refused, so a closed tab's seat is free for it.
        """
        now = self._clock()
        with self._lock:
            cap = self.limits.max_sessions
            full = bool(cap) and session_id not in self._seats and len(self._seats) >= cap
            due = self._swept_at is None or now - self._swept_at >= RUN_SWEEP_EVERY_S
        if due or full:
            self.sweep()
        with self._lock:
            returning = session_id in self._cleared
            seat = self._seats.get(session_id)
            if seat is None:
                cap = self.limits.max_sessions
                if cap and len(self._seats) >= cap:
                    return Admission(False, returning, len(self._seats))
                seat = self._seats[session_id] = _Seat(self._clock(), weakref.WeakSet())
            seat.last_active = self._clock()
            self._cleared.pop(session_id, None)
            return Admission(True, returning, len(self._seats))

    def hold(self, session_id: str, session) -> None:
        """Remember a tab's autoreg ``Session`` so that going idle clears it (weakly: no leak)."""
        with self._lock:
            seat = self._seats.get(session_id)
            if seat is not None:
                seat.sessions.add(session)

    def keep_for_lesson(self, session_id: str, on_path: bool = True) -> None:
        """A tab on a lesson path is not cleared by the idle limit (it still frees its seat once closed)."""
        with self._lock:
            seat = self._seats.get(session_id)
            if seat is not None:
                seat.on_path = on_path

    def release(self, session_id: str) -> None:
        with self._lock:
            self._seats.pop(session_id, None)

    def sweep(self) -> list[str]:
        """Give back the seats of closed tabs and of tabs idle too long; clear the idle ones' sessions.

        Returns the ids whose generation was cleared. Clearing is ``Session.reset()`` under the
        session's own lock: its KV cache and step records are dropped, the prompt is kept.
        """
        now, idle = self._clock(), self.limits.idle_seconds
        with self._lock:
            self._swept_at = now
            closed = [sid for sid in self._seats if not self._is_alive(sid)]
            for sid in closed:
                del self._seats[sid]
            stale = [sid for sid, seat in self._seats.items()
                     if idle is not None and not seat.on_path and now - seat.last_active > idle]
            to_clear = [self._seats.pop(sid) for sid in stale]
            for sid in stale:
                self._cleared[sid] = None
            while len(self._cleared) > MAX_CLEARED:  # a tab gone for good is never asked about again
                self._cleared.popitem(last=False)
        for seat in to_clear:
            for session in list(seat.sessions):
                session.reset()
        return stale


# ---------------------------------------------------------------- the server's one instance
_shared: Seats | None = None
_shared_lock = threading.Lock()


def shared_seats(is_alive: Callable[[str], bool] | None = None) -> Seats:
    """The process's seats, made on first call from the operator's settings with ``is_alive`` (later calls get
    that one); a daemon thread sweeps them when there is a cap or an idle limit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Seats(Limits.from_settings(settings.current()), is_alive=is_alive)
            if _shared.limits.max_sessions or _shared.limits.idle_seconds:
                threading.Thread(target=_sweep_forever, args=(_shared,), name="autoreg-seats",
                                 daemon=True).start()
        return _shared


def _sweep_forever(seats: Seats) -> None:
    while True:
        time.sleep(SWEEP_EVERY_S)
        try:
            seats.sweep()
        except Exception:  # noqa: BLE001 - a sweep must never kill the sweeper
            pass
