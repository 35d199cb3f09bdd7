"""Waiting for the teacher: ``wait_for_change`` returns the new version soon after a teacher's change (PostgreSQL:
woken by NOTIFY; SQLite: by polling), the same version at its timeout, and None when the class ended."""
import threading
import time

import pytest


def _later(delay, action):
    timer = threading.Timer(delay, action)
    timer.start()
    return timer


def test_a_teacher_change_wakes_a_waiter_with_the_new_version(store):
    code, key = store.create()
    version = store.version(code)
    _later(0.3, lambda: store.set_recipe(code, key, {"prompt": "x"}))
    start = time.monotonic()
    assert store.wait_for_change(code, version, timeout=10) == version + 1
    assert 0.25 <= time.monotonic() - start < 2.0


def test_no_change_returns_the_same_version_at_the_timeout(store):
    code, key = store.create()
    version = store.version(code)
    start = time.monotonic()
    assert store.wait_for_change(code, version, timeout=0.5) == version
    assert 0.45 <= time.monotonic() - start < 1.5
    assert store.wait_for_change(code, version - 1, timeout=5) == version  # already moved: at once


def test_a_class_that_ends_wakes_its_waiters_with_none(store):
    code, key = store.create()
    version = store.version(code)
    _later(0.3, lambda: store.end(code, key))
    start = time.monotonic()
    assert store.wait_for_change(code, version, timeout=10) is None
    assert time.monotonic() - start < 2.0


def test_a_students_news_wakes_no_follower(store):
    code, key = store.create()
    version = store.version(code)
    _later(0.1, lambda: store.join(code, "Ann"))
    assert store.wait_for_change(code, version, timeout=0.6) == version


@pytest.mark.parametrize("class_db", ["postgres"], indirect=True)
def test_postgres_wakes_every_waiter_well_before_its_own_recheck(store):
    """Forty waiters on one listener connection: all woken by one NOTIFY, long before they would read again."""
    from autoreg_ui.classroom.store import postgres

    code, key = store.create()
    version = store.version(code)
    woke: list[tuple[int | None, float]] = []

    def wait():
        start = time.monotonic()
        found = store.wait_for_change(code, version, timeout=30)
        woke.append((found, time.monotonic() - start))

    waiters = [threading.Thread(target=wait) for _ in range(40)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.5)
    store.set_recipe(code, key, {"prompt": "x"})
    for waiter in waiters:
        waiter.join(timeout=10)
    assert len(woke) == 40 and {found for found, _ in woke} == {version + 1}
    assert max(took for _, took in woke) < 0.5 + 2.0 < store.backend.recheck_s + 0.5
    assert len([d for d in postgres._listeners if d == store.path]) == 1  # one listener for the process
    assert postgres.listener(store.path).heard >= 1
