"""The teacher's transactions: the key kept as a hash, every change moving the version and the expiry, the
caps on questions and rounds, and the end of a class (by the teacher, the operator, or expiry)."""
import pytest

from autoreg_server.class_store import teacher
from autoreg_server.class_store.records import ClassError, NotTeacher, RateLimited


def test_the_key_is_kept_only_as_its_hash(store):
    code, key = store.create()
    with store._db() as db:
        kept = db.execute("SELECT teacher_hash FROM classes WHERE code = ?", (code,)).fetchone()[0]
    assert kept == teacher.key_hash(key) != key and len(kept) == 64
    assert store.is_teacher(code.lower(), key) and not store.is_teacher(code, None)


def test_a_teacher_change_moves_the_version_and_the_expiry(store, clock):
    code, key = store.create()
    before = store.info(code)
    clock.now += 100
    store.set_options(code, key, names_on=True)
    after = store.info(code)
    assert after.names_on and not after.leaderboard
    assert after.version == before.version + 1 and after.expires == before.expires + 100
    assert store.set_recipe(code, key, {"prompt": "x"}) == after.version + 1


def test_a_wrong_key_is_refused_counted_and_slowed(store):
    code, key = store.create()
    for _ in range(teacher.rates.KEY_FAILS_PER_MINUTE):
        with pytest.raises(NotTeacher, match="only join as a student"):
            store.claim_teacher(code, key + "x", source="tab")
    with pytest.raises(RateLimited, match="wrong teacher keys"):
        store.claim_teacher(code, key + "y", source="tab")
    store.claim_teacher(code, key, source="tab")  # the right key is never locked out
    with pytest.raises(ClassError, match="ended or expired"):
        store.claim_teacher("NOSUCH", key, source="other")


def test_questions_and_rounds_are_capped(store, monkeypatch):
    monkeypatch.setattr(teacher, "MAX_QUESTIONS", 2)
    monkeypatch.setattr(teacher, "MAX_ROUNDS", 1)
    code, key = store.create()
    first, second = store.ask(code, key, 0), store.ask(code, key, 1)
    assert second == first + 1 and store.info(code).open_question == second
    with pytest.raises(ClassError, match="asked 2 questions, its limit"):
        store.ask(code, key, 2)
    with pytest.raises(ClassError, match="1 to 8192 tokens"):
        store.start_round(code, key, 0, 4, {}, [])
    with pytest.raises(ClassError, match=f"1 to {teacher.MAX_DRAW_TOKENS} tokens"):
        store.start_round(code, key, 0, 0, {}, [1])
    store.start_round(code, key, 0, 4, {}, [1])
    with pytest.raises(ClassError, match="sampled 1 times, its limit"):
        store.start_round(code, key, 0, 4, {}, [1])


def test_reveal_and_close_move_the_open_question(store):
    code, key = store.create()
    qid = store.ask(code, key, 3)
    with pytest.raises(ClassError, match="does not exist"):
        store.reveal(code, key, qid + 1, {})
    store.reveal(code, key, qid, {"choice": 5})
    assert store.question(code, qid).revealed is not None and store.info(code).open_question == qid
    store.close_question(code, key)
    assert store.info(code).open_question is None


def test_ending_deletes_the_class_and_everything_in_it(store, clock):
    code, key = store.create()
    ann = store.join(code, "Ann")
    qid = store.ask(code, key, 0)
    store.guess(code, ann, qid, "a", token=1, tokens=1, prob=0.5, rank=1, score=1.0)
    store.end(code, key)
    with store._db() as db:
        left = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("classes", "students", "questions",
                                                                              "guesses")]
    assert left == [0, 0, 0, 0]
    assert not store.delete(code)


def test_creating_sweeps_expired_classes_and_old_attempts(store, clock):
    code, _ = store.create()
    with pytest.raises(ClassError):
        store.join("WRONG2", source="x")
    clock.now += 2 * 3600 + 1
    store.create()
    with store._db() as db:
        assert db.execute("SELECT COUNT(*) FROM classes WHERE code = ?", (code,)).fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 0
