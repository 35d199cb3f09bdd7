"""The core every part of the store shares: where the file is, how long a class lasts, the file made on first
use, and the write transaction (rolled back on an error)."""
from pathlib import Path

import pytest

from autoreg_server.class_store.core import (
    DEFAULT_HOURS,
    MAX_STUDENTS,
    StoreCore,
    class_hours,
    class_seats,
    default_path,
)
from autoreg_server.settings import Settings


def test_the_file_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOREG_CLASS_DB", str(tmp_path / "x.sqlite3"))
    assert default_path() == tmp_path / "x.sqlite3"
    monkeypatch.setenv("AUTOREG_CLASS_DB", "postgresql://u@db:5432/classes")
    assert default_path() == "postgresql://u@db:5432/classes"  # a URL is kept as it is, not made a path
    monkeypatch.delenv("AUTOREG_CLASS_DB")
    assert default_path().name == "classes.sqlite3"


def hours(value: str) -> float:
    return Settings.from_environ({"AUTOREG_CLASS_HOURS": value}).class_hours


def seats(value: str) -> int:
    return Settings.from_environ({"AUTOREG_CLASS_SEATS": value}).class_seats


def test_class_hours_fall_back_on_a_bad_value(monkeypatch):
    assert class_hours() == DEFAULT_HOURS == 6.0
    assert hours("1.5") == 1.5
    assert hours("soon") == DEFAULT_HOURS
    assert hours("-2") == DEFAULT_HOURS
    monkeypatch.setenv("AUTOREG_CLASS_HOURS", "1.5")
    assert class_hours() == 1.5


def test_seats_per_class_come_from_the_environment_within_bounds(monkeypatch, class_db):
    assert class_seats() == MAX_STUDENTS == 60
    assert seats("150") == 150
    assert [seats(v) for v in ("0", "-3", "1001", "many")] == [60] * 4
    monkeypatch.setenv("AUTOREG_CLASS_SEATS", "120")
    assert StoreCore(class_db).max_students == 120 and StoreCore(class_db, max_students=7).max_students == 7


def test_the_file_and_its_folder_are_made_on_first_use(tmp_path, clock):
    core = StoreCore(tmp_path / "a" / "b" / "c.sqlite3", clock=clock, hours=3, max_classes=4, max_students=5)
    assert Path(core.path).is_file()
    assert (core.hours, core.max_classes, core.max_students, core.clock()) == (3, 4, 5, clock.now)
    with core._db() as db:
        assert db.execute("SELECT COUNT(*) FROM classes").fetchone()[0] == 0


def test_a_write_commits_or_rolls_back_whole(class_db, clock):
    core = StoreCore(class_db, clock=clock)
    with core._tx() as db:
        db.execute("INSERT INTO attempts (source, kind, at) VALUES ('kept', 'k', 1)")
    with pytest.raises(KeyError), core._tx() as db:
        db.execute("INSERT INTO attempts (source, kind, at) VALUES ('dropped', 'k', 1)")
        raise KeyError
    with core._db() as db:
        assert [r[0] for r in db.execute("SELECT source FROM attempts")] == ["kept"]
    assert not core._write.locked()  # the process's write lock is given back either way
