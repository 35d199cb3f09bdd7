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
    from autoreg_server.class_store import postgres

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


def _counting_reads(store, monkeypatch) -> list[int]:
    reads = [0]
    opened = store._db

    def counted():
        reads[0] += 1
        return opened()

    monkeypatch.setattr(store, "_db", counted)
    return reads


@pytest.mark.parametrize("class_db", ["postgres"], indirect=True)
def test_postgres_waiters_share_one_version_read_until_the_listener_hears_of_the_class(store, monkeypatch):
    """Idle followers cost one read per class and process, not one each per poll; a change made elsewhere (another
    store object: another replica's) is read again as soon as its NOTIFY is heard, and a lost LISTEN voids it."""
    from autoreg_server import class_store
    from autoreg_server.class_store import postgres

    code, key = store.create()
    version = store.version(code)
    assert store.wait_for_change(code, version, timeout=0.2) == version  # the listener is in force now
    reads = _counting_reads(store, monkeypatch)
    assert [store.watched_version(code) for _ in range(20)] == [version] * 20
    assert reads[0] <= 1
    other = class_store.ClassStore(store.path, clock=store.clock, hours=2)
    other.set_recipe(code, key, {"prompt": "x"})
    assert store.wait_for_change(code, version, timeout=10) == version + 1  # woken, and read again
    assert store.watched_version(code) == version + 1
    # a lost LISTEN connection (its generation moves): what was read before is read again
    before = reads[0]
    with postgres.listener(store.path).lock:
        postgres.listener(store.path).generation += 1
    assert store.watched_version(code) == version + 1 and reads[0] == before + 1
    # the class's expiry is kept with the read: past it, the class reads as gone even before anyone says so
    store.clock.now += 3 * 3600
    assert store.watched_version(code) is None


@pytest.mark.parametrize("class_db", ["sqlite"], indirect=True)
def test_sqlite_waiters_read_the_version_each_time(store, monkeypatch):
    code, _ = store.create()
    version = store.version(code)
    reads = _counting_reads(store, monkeypatch)
    assert [store.watched_version(code) for _ in range(3)] == [version] * 3 and reads[0] == 3
