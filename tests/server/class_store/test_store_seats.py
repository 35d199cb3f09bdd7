"""A student's writes: joining, reporting where the tab is, guessing, drawing; each moves the class's activity
(the teacher's page) and never its version (the followers)."""
import pytest

from autoreg_server.class_store import seats
from autoreg_server.class_store.records import ClassError


def test_joining_seats_a_student_and_stirs_only_the_teacher(store):
    code, _ = store.create()
    version, activity = store.pulse(code)
    ann = store.join(code.lower(), "  Ann  ")
    assert store.student(code, ann).nickname == "Ann" and store.pulse(code) == (version, activity + 1)
    assert store.join(code) != ann


def test_a_wrong_code_is_refused_and_counted_against_the_source(store):
    store.create()
    with pytest.raises(ClassError, match="no open class"):
        store.join("NOPE22", source="tab-1")
    with store._db() as db:
        assert db.execute("SELECT COUNT(*) FROM attempts WHERE kind = 'join-fail'").fetchone()[0] == 2  # + everyone


def test_where_a_tab_is(store):
    code, _ = store.create()
    ann = store.join(code)
    with pytest.raises(ClassError, match="Unknown mode"):
        store.seen(code, ann, "sleeping", "class")
    store.seen(code, ann, "exploring", "p" * 100)
    me = store.student(code, ann)
    assert me.mode == "exploring" and me.page == "p" * 40
    assert seats.MODES == ("following", "exploring")


def test_a_guess_is_bounded_and_replaces_the_earlier_one(store):
    code, key = store.create()
    ann = store.join(code)
    qid = store.ask(code, key, 0)
    store.guess(code, ann, qid, "x" * 100, token=1, tokens=3, prob=0.1, rank=4, score=10.0)
    store.guess(code, ann, qid, "y" * 100, token=2, tokens=1, prob=0.2, rank=2, score=20.0)
    [kept] = store.guesses(code, qid)
    assert kept.text == "y" * seats.GUESS_MAX and (kept.token, kept.tokens, kept.rank, kept.score) == (2, 1, 2, 20.0)


def test_a_removed_student_writes_nothing_more(store):
    code, key = store.create()
    ann = store.join(code)
    qid = store.ask(code, key, 0)
    rid = store.start_round(code, key, 0, 2, {}, [1])
    store.remove(code, key, ann)
    with pytest.raises(ClassError, match="not in this class"):
        store.guess(code, ann, qid, "a", token=1, tokens=1, prob=0.5, rank=1, score=1.0)
    with pytest.raises(ClassError, match="not in this class"):
        store.add_draw(code, ann, rid, [1], seed=0)


def test_a_draw_holds_token_ids_only(store):
    code, key = store.create()
    ann = store.join(code)
    rid = store.start_round(code, key, 0, 2, {}, [1])
    for bad in ([], [-1], [1 << 24]):
        with pytest.raises(ClassError, match="1 to 2 token ids"):
            store.add_draw(code, ann, rid, bad, seed=0)
    store.add_draw(code, ann, rid, [(1 << 24) - 1], seed=3)
    assert [d.tokens for d in store.draws(code, rid)] == [((1 << 24) - 1,)]
