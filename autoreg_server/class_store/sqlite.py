"""What is SQLite's own in the class store: the schema's column types, opening the file (WAL, busy timeout),
the write transaction, the one upsert, and ``rowid`` as the order of arrival. ``Backend`` puts them behind the
names every back end has (``dialect``); ``postgres`` is the other one.

Followers of a class on SQLite learn of a change by reading its version (one indexed read): ``watch`` gives an
event that is never set, so a waiter polls every ``recheck_s``.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autoreg_server.class_store import dialect

Connection = sqlite3.Connection

SCHEMA = dialect.schema(real="REAL", int="INTEGER", id="INTEGER PRIMARY KEY AUTOINCREMENT", seq="")

# A student's guess for a question; a new guess replaces their earlier one (the key is question, student).
REPLACE_GUESS = "INSERT OR REPLACE " + dialect.GUESS_VALUES


@contextmanager
def connection(path: Path) -> Iterator[Connection]:
    """A connection to the class file in autocommit mode (transactions are explicit), closed on leaving."""
    db = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")  # readers never wait for the one writer
        db.execute("PRAGMA busy_timeout=10000")
        yield db
    finally:
        db.close()


def create_tables(db: Connection) -> None:
    """The schema, on a new file; an existing file keeps its rows and gains the columns added since
    (``dialect.ADDED_COLUMNS``: SQLite has no ``ADD COLUMN IF NOT EXISTS``, so the table's columns are read)."""
    db.executescript(SCHEMA)
    for table, column, kind in dialect.ADDED_COLUMNS:
        if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
            try:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            except sqlite3.OperationalError as exc:  # another process opening the file added it first
                if "duplicate column" not in str(exc):
                    raise


@contextmanager
def write_transaction(db: Connection) -> Iterator[Connection]:
    """One write transaction, taking the write lock at its start; committed, or rolled back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


class Backend:
    """A class file: the SQLite dialect behind the names every back end has."""

    name = "sqlite"
    schema = SCHEMA
    tiebreak = "rowid"
    replace_guess = REPLACE_GUESS
    recheck_s = 0.2  # a waiter reads the version this often (one indexed read of a local file)

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def connection(self):
        return connection(self.path)

    create_tables = staticmethod(create_tables)
    write_transaction = staticmethod(write_transaction)

    def changed(self, db: Connection, code: str) -> None:
        """Nothing to say: followers read the version."""

    @contextmanager
    def watch(self, code: str) -> Iterator[threading.Event]:
        yield threading.Event()  # never set: the waiter polls

    @staticmethod
    def stamp(code: str) -> None:
        """Nothing is heard: every waiter reads the version itself."""
        return None

    def close(self) -> None:
        """Nothing held open: each use opens and closes its connection."""
