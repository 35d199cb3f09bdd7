"""The PostgreSQL dialect module: ``?`` parameters become ``%s``, the schema is created once with exact times,
the upsert replaces a guess and moves it to the end of the arrival order (as SQLite's replace does), writes
are serialised across store objects (replicas), and a change made by another process wakes a waiter here."""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autoreg_server.class_store import ClassError, ClassStore, postgres

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.parametrize("class_db", ["postgres"], indirect=True)


def test_question_marks_become_psycopg_parameters(class_db):
    assert postgres.placeholders("SELECT a FROM t WHERE b = ? AND c = ?") == "SELECT a FROM t WHERE b = %s AND c = %s"
    assert postgres.placeholders("SELECT 5 % 2 WHERE x = ?") == "SELECT 5 %% 2 WHERE x = %s"
    with ClassStore(class_db)._db() as db:
        assert db.execute("SELECT 7 % 4").fetchone() == (3,)
        assert db.execute("SELECT 7 % ?, ?", (4, "a?b")).fetchone() == (3, "a?b")


def test_the_schema_is_created_once_with_the_same_tables_and_exact_times(class_db, clock):
    store = ClassStore(class_db, clock=clock)
    clock.now = 1_700_000_000.123456
    code, _ = store.create()
    ClassStore(class_db, clock=clock)  # a second replica starting: the schema is left as it is
    with store._db() as db:
        tables = {r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        created = db.execute("SELECT created FROM classes WHERE code = ?", (code,)).fetchone()[0]
    assert tables == {"classes", "students", "questions", "guesses", "rounds", "draws", "stops", "attempts"}
    assert created == 1_700_000_000.123456  # double precision, not PostgreSQL's four-byte REAL


def test_a_replaced_guess_moves_to_the_end_of_the_arrival_order(class_db, clock):
    store = ClassStore(class_db, clock=clock)
    code, key = store.create()
    ann, bob = store.join(code, "Ann"), store.join(code, "Bob")
    qid = store.ask(code, key, 0)
    for student, text in ((ann, "Rome"), (bob, "Lyon"), (ann, "Paris")):  # all at the same (fake) time
        store.guess(code, student, qid, text, token=1, tokens=1, prob=0.5, rank=1, score=1.0)
    assert [(g.student, g.text) for g in store.guesses(code, qid)] == [(bob, "Lyon"), (ann, "Paris")]


def test_writes_are_serialised_across_replicas(class_db, clock):
    """Ten store objects (each with its own process lock, as on ten replicas) race to create classes: the cap
    holds exactly, because every write transaction holds the same advisory lock."""
    replicas = [ClassStore(class_db, clock=clock, max_classes=4) for _ in range(10)]
    made, refused = [], []

    def create(store):
        try:
            made.append(store.create()[0])
        except ClassError:
            refused.append(1)

    threads = [threading.Thread(target=create, args=(s,)) for s in replicas for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert (len(made), len(refused), len(set(made))) == (4, 16, 4)
    assert sorted(replicas[0].codes()) == sorted(made)


def test_a_change_from_another_process_wakes_a_waiter_here(class_db, clock):
    store = ClassStore(class_db)
    code, key = store.create()
    version = store.version(code)
    teacher = ("import time; from autoreg_server.class_store import ClassStore; "
               f"s = ClassStore({class_db!r}); time.sleep(0.5); s.set_recipe({code!r}, {key!r}, {{'prompt': 'x'}}); "
               "print(time.time(), flush=True)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    other = subprocess.Popen([sys.executable, "-c", teacher], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        found = store.wait_for_change(code, version, timeout=30)
        woke = time.time()
        out, _ = other.communicate(timeout=30)
    finally:
        other.kill()
    assert other.returncode == 0 and found == version + 1
    assert woke - float(out) < 1.0  # woken by the NOTIFY, not by a recheck (5 s) or the timeout (30 s)
    assert store.info(code).recipe == {"prompt": "x"}


def test_the_listener_reconnects_when_its_connection_is_cut(class_db):
    store = ClassStore(class_db)
    code, key = store.create()
    version = store.version(code)
    heard = postgres.listener(class_db)
    assert heard.listening.wait(5)
    before = _listeners(store)
    with store._db() as db:  # the server drops the LISTEN connection (a restart, a network cut)
        assert db.execute("SELECT pg_terminate_backend(?)", (before[0],)).fetchone() == (True,)
    deadline = time.monotonic() + 30  # a reconnect waits 1 s, then connects: generous for a loaded machine
    now = _listeners(store)  # read once per look: two reads could see the old one, then none, and stop early
    while time.monotonic() < deadline and not (len(now) == 1 and now != before):
        time.sleep(0.1)
        now = _listeners(store)
    assert len(now) == 1 and now != before, ("the listener did not come back", before, now)
    threading.Timer(0.3, lambda: store.set_recipe(code, key, {"prompt": "x"})).start()
    start = time.monotonic()
    assert store.wait_for_change(code, version, timeout=30) == version + 1
    # woken by the NOTIFY: under the 5 s recheck (store.recheck_s) that a missed notification would wait for
    assert time.monotonic() - start < postgres.Backend.recheck_s - 1.0
    assert postgres.listener(class_db) is heard and heard.heard >= 1


def _listeners(store) -> list[int]:
    """The server processes of this database's LISTEN connections."""
    with store._db() as db:
        return [r[0] for r in db.execute("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' "
                                         "AND datname = current_database()")]


def test_a_database_made_before_rounds_kept_their_stop_gains_the_column_and_keeps_its_rounds(class_db, clock):
    before = postgres.SCHEMA.replace(", created DOUBLE PRECISION NOT NULL, stop TEXT);",
                                     ", created DOUBLE PRECISION NOT NULL);")
    assert before != postgres.SCHEMA
    import psycopg

    with psycopg.connect(class_db, autocommit=True) as conn:
        conn.execute(before)
        conn.execute("INSERT INTO classes (code, teacher_hash, created, touched, expires, open_round) "
                     "VALUES ('ABC234', 'x', 1, 1, %s, 1)", (clock() + 60,))
        conn.execute("INSERT INTO rounds (code, step, tokens, config, context, created) VALUES ('ABC234', 2, 3, '{}', "
                     "'[1, 2]', 1)")
    store = ClassStore(class_db, clock=clock)
    ClassStore(class_db, clock=clock)  # a second replica starting: nothing added twice
    old = store.round("ABC234", 1)
    assert (old.step, old.context, old.stop) == (2, (1, 2), None)
    with store._db() as db:
        assert db.execute("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'rounds' "
                          "AND column_name = 'stop'").fetchone()[0] == 1
