"""The SQLite dialect module: the file is in WAL mode, the schema is created once and never rewrites a file,
the write transaction commits or rolls back, and a guess is replaced by the upsert."""
import sqlite3

import pytest

from autoreg_server.class_store import ClassStore, sqlite

TABLES = {"classes", "students", "questions", "guesses", "rounds", "draws", "attempts"}


def test_a_connection_opens_the_file_in_wal_mode_with_a_busy_timeout(tmp_path):
    with sqlite.connection(tmp_path / "c.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 10000
        assert db.isolation_level is None  # transactions are explicit
    with pytest.raises(sqlite3.ProgrammingError):
        db.execute("SELECT 1")  # closed on leaving


def test_the_schema_is_created_once_and_keeps_what_a_file_holds(tmp_path):
    with sqlite.connection(tmp_path / "c.sqlite3") as db:
        sqlite.create_tables(db)
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert TABLES <= names
        db.execute("INSERT INTO attempts (source, kind, at) VALUES ('s', 'k', 1)")
        sqlite.create_tables(db)
        assert db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 1


def test_the_write_transaction_commits_or_rolls_back(tmp_path):
    path = tmp_path / "c.sqlite3"
    with sqlite.connection(path) as db:
        sqlite.create_tables(db)
        with sqlite.write_transaction(db):
            db.execute("INSERT INTO attempts (source, kind, at) VALUES ('kept', 'k', 1)")
        with pytest.raises(RuntimeError), sqlite.write_transaction(db):
            db.execute("INSERT INTO attempts (source, kind, at) VALUES ('dropped', 'k', 1)")
            raise RuntimeError
    with sqlite.connection(path) as db:
        assert [r[0] for r in db.execute("SELECT source FROM attempts")] == ["kept"]


def test_a_new_guess_replaces_the_students_earlier_one(tmp_path):
    with sqlite.connection(tmp_path / "c.sqlite3") as db:
        sqlite.create_tables(db)
        db.execute(sqlite.REPLACE_GUESS, (1, "ann", "Rome", 7, 1, 0.25, 2, 80.0, 1.0))
        db.execute(sqlite.REPLACE_GUESS, (1, "ann", "Paris", 8, 1, 0.5, 1, 90.0, 2.0))
        db.execute(sqlite.REPLACE_GUESS, (1, "bob", "Lyon", 9, 1, 0.1, 3, 0.0, 3.0))
        assert db.execute("SELECT student, text FROM guesses ORDER BY student").fetchall() == [
            ("ann", "Paris"), ("bob", "Lyon")]


def test_a_class_file_written_before_the_split_still_opens(tmp_path, clock):
    """A file with the schema as it always was, written directly, is read by the store unchanged."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(sqlite.SCHEMA)
    db.execute("INSERT INTO classes (code, teacher_hash, created, touched, expires, recipe, version) "
               "VALUES ('ABC234', 'x', 1, 1, ?, '{\"prompt\": \"Hi\"}', 7)", (clock() + 60,))
    db.execute("INSERT INTO students (code, student, nickname, joined, seen) VALUES ('ABC234', 's1', 'Ann', 1, 1)")
    db.commit()
    db.close()
    store = ClassStore(path, clock=clock)
    info = store.info("abc-234")
    assert info.recipe == {"prompt": "Hi"} and info.version == 7 and info.open_question is None
    assert [s.nickname for s in store.students("ABC234")] == ["Ann"]


def test_a_class_file_made_before_rounds_kept_their_stop_gains_the_column_and_keeps_its_rounds(tmp_path, clock):
    path = tmp_path / "before.sqlite3"
    before = sqlite.SCHEMA.replace(", created REAL NOT NULL, stop TEXT);", ", created REAL NOT NULL);")
    assert before != sqlite.SCHEMA
    db = sqlite3.connect(path)
    db.executescript(before)
    db.execute("INSERT INTO classes (code, teacher_hash, created, touched, expires, open_round) "
               "VALUES ('ABC234', 'x', 1, 1, ?, 1)", (clock() + 60,))
    db.execute("INSERT INTO rounds (code, step, tokens, config, context, created) VALUES ('ABC234', 2, 3, '{}', "
               "'[1, 2]', 1)")
    db.commit()
    assert "stop" not in {r[1] for r in db.execute("PRAGMA table_info(rounds)")}
    db.close()
    store = ClassStore(path, clock=clock)
    ClassStore(path, clock=clock)  # opened again: the column is there, nothing added twice
    old = store.round("ABC234", 1)
    assert (old.step, old.context, old.stop) == (2, (1, 2), None)
    with sqlite.connection(path) as db:
        assert [r[1] for r in db.execute("PRAGMA table_info(rounds)")].count("stop") == 1
