"""The part of the class store every kind of access shares: where the file is, the clock, the caps, and the
two ways in (a read connection, or the one write transaction at a time).

``ClassStore`` is composed of subclasses of ``StoreCore``, one per kind of access (``teacher``, ``seats``,
``reads``); none of them opens a connection itself.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from autoreg_server import settings
from autoreg_server.class_store.dialect import is_postgres
from autoreg_server.class_store.sqlite import Connection

ENV_DB = settings.variable("class_db")
ENV_HOURS = settings.variable("class_hours")
ENV_SEATS = settings.variable("class_seats")  # a lecture on PostgreSQL across replicas: 100-300
DEFAULT_HOURS = settings.Settings.class_hours  # a class expires this long after its last teacher action
MAX_STUDENTS = settings.Settings.class_seats  # per class, unless AUTOREG_CLASS_SEATS says otherwise
MAX_CLASSES = 50  # open classes per server


def default_path() -> Path | str:
    """``AUTOREG_CLASS_DB``: a SQLite file (a path), or a PostgreSQL URL (``postgresql://…``, kept as it is); by
    default a file in the app's cache dir."""
    served = settings.current()
    if served.class_db:
        return served.class_db if is_postgres(served.class_db) else Path(served.class_db)
    from autoreg_core.engine.loading import cache_dir

    return cache_dir(served.cache_dir or None) / "classes.sqlite3"


def class_hours() -> float:
    """How long a class lasts after its teacher's last action: ``AUTOREG_CLASS_HOURS``."""
    return settings.current().class_hours


def class_seats() -> int:
    """Students per class: ``AUTOREG_CLASS_SEATS`` (1 to 1000), else ``MAX_STUDENTS``."""
    return settings.current().class_seats


def open_backend(where: Path | str):
    """The back end for ``where``: a PostgreSQL URL, else the path of a SQLite file."""
    if is_postgres(where):
        from autoreg_server.class_store import postgres

        return postgres.Backend(where)
    from autoreg_server.class_store import sqlite

    return sqlite.Backend(Path(where))


class StoreCore:
    """Every class of this server, in one SQLite file (WAL: readers never wait for the one writer), or of every
    replica, in one PostgreSQL database (``path`` is then its ``postgresql://`` URL; see ``dialect``)."""

    def __init__(self, path: Path | str, clock: Callable[[], float] = time.time, hours: float = DEFAULT_HOURS,
                 max_classes: int = MAX_CLASSES, max_students: int | None = None):
        self.backend = open_backend(path)
        self.path = path if is_postgres(path) else Path(path)
        self.clock, self.hours = clock, hours
        self.max_classes = max_classes
        self.max_students = class_seats() if max_students is None else max_students
        self._write = threading.Lock()  # one writer at a time in this process (SQLite would make us wait anyway)
        self._versions: dict[str, tuple] = {}  # code → (listener stamp, read at, version, expires): ``watched_version``
        self._change_hooks: list[Callable[[str], None]] = []
        with self._db() as db:
            self.backend.create_tables(db)

    def _db(self):
        """A connection for reads (and the schema), closed (or given back to the pool) on leaving."""
        return self.backend.connection()

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        """The one write transaction at a time of this process: committed, or rolled back on an exception."""
        with self._write, self._db() as db, self.backend.write_transaction(db):
            yield db

    def on_change(self, hook: Callable[[str], None]) -> None:
        """Call ``hook(code)`` after each teacher change this process commits (the class feed reads it at once;
        a change made by another process reaches it through ``NOTIFY`` or its next read)."""
        self._change_hooks.append(hook)

    def _changed_here(self, code: str) -> None:
        self._versions.pop(code, None)  # PostgreSQL: the version cached until NOTIFY arrives is old now
        for hook in list(self._change_hooks):
            hook(code)

    def close(self) -> None:
        """Give back what the back end holds open (PostgreSQL: this process's pool and listener)."""
        self.backend.close()
