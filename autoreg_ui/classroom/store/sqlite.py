"""What is SQLite's own in the class store: the schema, opening the file (WAL, busy timeout), the write
transaction, and the one upsert.

Kept in one module so that another back end (PostgreSQL) can be put behind the same names. The queries in
the other modules are plain SQL with ``?`` parameters, save two SQLite habits a port must also change: new ids
are read from ``cursor.lastrowid`` (teacher.py) and ties are ordered by ``rowid`` (reads.py).
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

Connection = sqlite3.Connection

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, teacher_hash TEXT NOT NULL, created REAL NOT NULL, touched REAL NOT NULL,
    expires REAL NOT NULL, recipe TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 0,
    names_on INTEGER NOT NULL DEFAULT 0, leaderboard INTEGER NOT NULL DEFAULT 0,
    open_question INTEGER, activity INTEGER NOT NULL DEFAULT 0, open_round INTEGER);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL, student TEXT NOT NULL, nickname TEXT NOT NULL, joined REAL NOT NULL,
    seen REAL NOT NULL, mode TEXT NOT NULL DEFAULT 'following', page TEXT NOT NULL DEFAULT '',
    removed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, code TEXT NOT NULL, step INTEGER NOT NULL, asked REAL NOT NULL,
    revealed REAL, model TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS guesses (
    question INTEGER NOT NULL, student TEXT NOT NULL, text TEXT NOT NULL, token INTEGER NOT NULL,
    tokens INTEGER NOT NULL, prob REAL NOT NULL, rank INTEGER NOT NULL, score REAL NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (question, student));
CREATE TABLE IF NOT EXISTS rounds (
    id INTEGER PRIMARY KEY AUTOINCREMENT, code TEXT NOT NULL, step INTEGER NOT NULL, tokens INTEGER NOT NULL,
    config TEXT NOT NULL, context TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS draws (
    round INTEGER NOT NULL, student TEXT NOT NULL, tokens TEXT NOT NULL, seed INTEGER NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (round, student));
CREATE TABLE IF NOT EXISTS attempts (source TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_source ON attempts (source, kind, at);
"""

# A student's guess for a question; a new guess replaces their earlier one (the key is question, student).
REPLACE_GUESS = ("INSERT OR REPLACE INTO guesses (question, student, text, token, tokens, prob, rank, score, at) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


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
    """The schema, on a new file; an existing file is left as it is."""
    db.executescript(SCHEMA)


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
