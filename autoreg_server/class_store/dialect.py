"""What differs between the class store's two back ends, and nothing else: every query of the store is written
once, in the SQL both speak, with ``?`` parameters; a back end supplies only its dialect's real differences.

A back end (``sqlite.Backend`` for a file, ``postgres.Backend`` for ``postgresql://…``) has:

- ``schema``: the one schema below with its column types filled in (``REAL`` is ``DOUBLE PRECISION`` on
  PostgreSQL, whose ``REAL`` is four bytes; ids are ``AUTOINCREMENT`` or an identity; ``guesses`` and ``draws``
  gain a ``seq`` column on PostgreSQL, which has no ``rowid`` to break ties in arrival order);
- ``tiebreak``: the column that orders rows that arrived at the same time (``rowid`` or ``seq``);
- ``replace_guess``: the one upsert (``INSERT OR REPLACE`` or ``ON CONFLICT … DO UPDATE``);
- ``connection()`` (a context manager: a connection whose ``execute`` takes ``?`` parameters, closed or given
  back on leaving), ``create_tables(db)`` (the schema, and ``ADDED_COLUMNS`` on an older file or database) and
  ``write_transaction(db)`` (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: a transaction holding one advisory lock,
  so writes are serialised across replicas as SQLite serialises them in a file);
- ``stamp(code)``: what this process has heard of the class (PostgreSQL: the listener's count; SQLite: None,
  every waiter reads the version itself);
- ``changed(db, code)``: said inside a teacher's transaction (PostgreSQL: ``NOTIFY``; SQLite: nothing) and
  ``watch(code)``: an event set when the class may have changed (PostgreSQL: by one listener thread per
  process; SQLite: never, the waiter polls), with ``recheck_s``, how often a waiter reads the version anyway;
- ``close()``.

``core.open_backend`` picks the back end from ``AUTOREG_CLASS_DB``; this module imports neither.

New ids are read with ``INSERT … RETURNING id`` on both (SQLite has had it since 3.35).
"""
from __future__ import annotations

from pathlib import Path

POSTGRES_PREFIXES = ("postgresql://", "postgres://")

SCHEMA_TEMPLATE = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, teacher_hash TEXT NOT NULL, created {real} NOT NULL, touched {real} NOT NULL,
    expires {real} NOT NULL, recipe TEXT NOT NULL DEFAULT '', version {int} NOT NULL DEFAULT 0,
    names_on {int} NOT NULL DEFAULT 0, leaderboard {int} NOT NULL DEFAULT 0,
    open_question {int}, activity {int} NOT NULL DEFAULT 0, open_round {int});
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL, student TEXT NOT NULL, nickname TEXT NOT NULL, joined {real} NOT NULL,
    seen {real} NOT NULL, mode TEXT NOT NULL DEFAULT 'following', page TEXT NOT NULL DEFAULT '',
    removed {int} NOT NULL DEFAULT 0, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS questions (
    id {id}, code TEXT NOT NULL, step {int} NOT NULL, asked {real} NOT NULL,
    revealed {real}, model TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS guesses (
    question {int} NOT NULL, student TEXT NOT NULL, text TEXT NOT NULL, token {int} NOT NULL,
    tokens {int} NOT NULL, prob {real} NOT NULL, rank {int} NOT NULL, score {real} NOT NULL, at {real} NOT NULL,{seq}
    PRIMARY KEY (question, student));
CREATE TABLE IF NOT EXISTS rounds (
    id {id}, code TEXT NOT NULL, step {int} NOT NULL, tokens {int} NOT NULL,
    config TEXT NOT NULL, context TEXT NOT NULL, created {real} NOT NULL, stop TEXT);
CREATE TABLE IF NOT EXISTS draws (
    round {int} NOT NULL, student TEXT NOT NULL, tokens TEXT NOT NULL, seed {int} NOT NULL, at {real} NOT NULL,{seq}
    PRIMARY KEY (round, student));
CREATE TABLE IF NOT EXISTS stops (code TEXT PRIMARY KEY, stop TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attempts (source TEXT NOT NULL, kind TEXT NOT NULL, at {real} NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_source ON attempts (source, kind, at);
"""

# Columns added to a table after it was first created: a file or database made before gains them when it is opened
# (``create_tables``), empty (NULL) in the rows it already holds. ``rounds.stop``: the lesson stop the teacher was
# on when the round started (the ``stops`` row's JSON), so a student's page can tell whether the class is still there.
ADDED_COLUMNS = (("rounds", "stop", "TEXT"),)

GUESS_COLUMNS = ("question", "student", "text", "token", "tokens", "prob", "rank", "score", "at")
GUESS_VALUES = f"INTO guesses ({', '.join(GUESS_COLUMNS)}) VALUES ({', '.join('?' for _ in GUESS_COLUMNS)})"


def schema(*, real: str, int: str, id: str, seq: str) -> str:  # noqa: A002 (the names of the template)
    return SCHEMA_TEMPLATE.format(real=real, int=int, id=id, seq=seq)


def is_postgres(where: Path | str) -> bool:
    return isinstance(where, str) and where.startswith(POSTGRES_PREFIXES)

