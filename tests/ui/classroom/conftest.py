"""A fake clock and a class store on a temporary file, for the store's module tests."""
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
def store(tmp_path, clock):
    return ClassStore(tmp_path / "classes.sqlite3", clock=clock, hours=2)
