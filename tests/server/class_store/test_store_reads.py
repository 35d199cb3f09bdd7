"""Every read: a class past its expiry reads as gone, scores count only revealed questions, rounds and
draws come back oldest first, the operator sees open classes."""
from autoreg_server.class_store.reads import ClassReads


def _guess(store, code, student, qid, score):
    store.guess(code, student, qid, "a", token=1, tokens=1, prob=0.5, rank=1, score=score)


def test_an_expired_class_reads_as_gone_before_it_is_swept(store, clock):
    code, _ = store.create()
    assert store.info(code).code == code and store.pulse(code) == (0, 0) and store.codes() == [code]
    clock.now = store.info(code).expires
    assert store.info(code) is None and store.pulse(code) is None and store.version(code) is None
    assert store.codes() == []
    with store._db() as db:
        assert db.execute("SELECT COUNT(*) FROM classes").fetchone()[0] == 1  # still in the file


def test_scores_count_only_revealed_questions(store):
    code, key = store.create()
    ann, bob = store.join(code, "Ann"), store.join(code, "Bob")
    q1 = store.ask(code, key, 0)
    _guess(store, code, ann, q1, 50.0)
    _guess(store, code, bob, q1, 10.0)
    store.reveal(code, key, q1, {})
    q2 = store.ask(code, key, 1)
    _guess(store, code, ann, q2, 40.0)
    assert store.scores(code) == {ann: 50.0, bob: 10.0}
    assert store.answered(code, ann) == 1 and store.answered(code, "nobody") == 0
    assert store.question(code, None) is None and store.question(code, q2).model == {}
    assert store.guesses("OTHER2", q1) == []  # another class's question reads as empty


def test_rounds_and_draws_come_back_oldest_first(store):
    code, key = store.create()
    ann, bob = store.join(code), store.join(code)
    r1 = store.start_round(code, key, 0, 3, {"t": 1}, [4, 5])
    store.add_draw(code, bob, r1, [1], seed=2)
    store.add_draw(code, ann, r1, [2, 3], seed=1)
    r2 = store.start_round(code, key, 1, 3, {"t": 2}, [6])
    assert [(r.id, r.context, r.config) for r in store.rounds(code)] == [(r1, (4, 5), {"t": 1}), (r2, (6,), {"t": 2})]
    assert [(d.student, d.tokens) for d in store.draws(code, r1)] == [(bob, (1,)), (ann, (2, 3))]
    assert store.round(code, None) is None and store.round("OTHER2", r1) is None


def test_students_come_back_in_joining_order(store, clock):
    code, _ = store.create()
    first = store.join(code, "Zed")
    clock.now += 1
    second = store.join(code, "Amy")
    assert [s.student for s in store.students(code)] == [first, second]
    assert isinstance(store, ClassReads)
