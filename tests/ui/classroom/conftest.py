"""A fake clock and a class store on a temporary file or database (``class_db``: SQLite and PostgreSQL), for
the store's module tests."""
import pytest

from autoreg_ui.classroom.store import ClassStore


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(class_db, clock):
    return ClassStore(class_db, clock=clock, hours=2)
