"""The class store on a temporary SQLite file, and on a PostgreSQL database (``class_db``), with a fake clock:
codes, the teacher key, limits, expiry, restart."""
import pytest

from autoreg_server.class_store import (
    ALPHABET,
    CODE_LENGTH,
    JOIN_FAILS_PER_MINUTE,
    ClassError,
    ClassStore,
    NotTeacher,
    RateLimited,
    clean_nickname,
    normal_code,
)


def _guess(store, code, student, qid, text="Paris", prob=0.5, score=90.0):
    store.guess(code, student, qid, text, token=7, tokens=1, prob=prob, rank=1, score=score)


def test_a_class_has_a_short_code_without_look_alikes_and_a_hashed_key(store, stored_bytes):
    codes = set()
    for _ in range(20):
        code, key = store.create()
        assert len(code) == CODE_LENGTH and set(code) <= set(ALPHABET)
        assert not set(code) & set("01OIL")
        assert store.is_teacher(code, key) and not store.is_teacher(code, key + "x") and not store.is_teacher(code, "")
        codes.add(code)
        assert key.encode() not in stored_bytes(store)  # only its hash is kept
    assert len(codes) == 20
    assert normal_code(" ab-c d2 ") == "ABCD2"


def test_only_the_teacher_key_changes_a_class(store):
    code, key = store.create()
    student = store.join(code, "Ann")
    forged = [lambda k: store.set_recipe(code, k, {"prompt": "x"}), lambda k: store.ask(code, k, 0),
              lambda k: store.set_options(code, k, names_on=True), lambda k: store.close_question(code, k),
              lambda k: store.remove(code, k, student), lambda k: store.end(code, k)]
    for action in forged:
        for wrong in (None, "", student, key[:-1], "x" * len(key)):
            with pytest.raises(NotTeacher):
                action(wrong)
    assert store.info(code).recipe is None and store.info(code).open_question is None
    assert not store.info(code).names_on and not store.student(code, student).removed
    qid = store.ask(code, key, 3)
    with pytest.raises(NotTeacher):
        store.reveal(code, student, qid, {"choice": 1})
    assert store.question(code, qid).revealed is None


def test_wrong_codes_are_slowed_and_none_gets_in(store, clock):
    code, _ = store.create()
    refused = slowed = 0
    for i in range(1000):
        try:
            guess = "ZZZZZ" + ALPHABET[i % len(ALPHABET)]
            store.join(guess if guess != code else "ZZZZZZZ", source="10.0.0.9")
        except RateLimited as exc:
            slowed += 1
            assert exc.retry_after_s >= 1
        except ClassError:
            refused += 1
        clock.now += 0.01
    assert refused == JOIN_FAILS_PER_MINUTE and slowed == 1000 - JOIN_FAILS_PER_MINUTE
    assert store.students(code) == []
    with pytest.raises(RateLimited):  # while slowed, even the right code waits
        store.join(code, source="10.0.0.9")
    assert store.join(code, source="10.0.0.10")  # another source is not slowed
    clock.now += 61
    assert store.join(code, source="10.0.0.9")


def test_nicknames_are_bounded_and_classes_and_seats_are_capped(class_db, clock):
    store = ClassStore(class_db, clock=clock, max_classes=2, max_students=2)
    assert clean_nickname("  <b>Ann</b>\n\tthe   great " + "x" * 40) == "<b>Ann</b> the great xxx"
    code, _ = store.create()
    store.create()
    with pytest.raises(ClassError, match="limit"):
        store.create()
    a = store.join(code, "<script>alert(1)</script>" * 3)
    assert store.student(code, a).nickname == "<script>alert(1)</script>"[:24]
    store.join(code)
    with pytest.raises(ClassError, match="full"):
        store.join(code)


def test_guesses_replace_close_at_reveal_and_score(store):
    code, key = store.create()
    ann, bob = store.join(code, "Ann"), store.join(code, "Bob")
    v0 = store.version(code)
    qid = store.ask(code, key, 4)
    assert store.info(code).open_question == qid and store.version(code) > v0
    _guess(store, code, ann, qid, "Rome", prob=0.25, score=80.0)
    _guess(store, code, ann, qid, "Paris", prob=0.5, score=90.0)  # replaces the first
    _guess(store, code, bob, qid, "Lyon", prob=2 ** -11, score=0.0)
    said = [(g.student, g.text, g.score) for g in store.guesses(code, qid)]
    assert said == [(ann, "Paris", 90.0), (bob, "Lyon", 0.0)]
    assert store.scores(code) == {}  # nothing counts before the reveal
    store.reveal(code, key, qid, {"choice": 7})
    assert store.question(code, qid).model == {"choice": 7}
    with pytest.raises(ClassError, match="revealed"):
        _guess(store, code, bob, qid, "Paris")
    q2 = store.ask(code, key, 5)
    _guess(store, code, ann, q2, "a", prob=0.5, score=90.0)
    store.reveal(code, key, q2, {})
    assert store.scores(code) == {ann: 180.0, bob: 0.0}
    store.remove(code, key, bob)
    q3 = store.ask(code, key, 6)
    with pytest.raises(ClassError, match="not in this class"):
        _guess(store, code, bob, q3)
    with pytest.raises(ClassError, match="not in this class"):
        _guess(store, "OTHER1", ann, q3)
    with pytest.raises(ClassError, match="does not exist"):
        _guess(store, code, ann, q3 + 100)


def test_guessing_too_fast_is_slowed(store, clock):
    code, key = store.create()
    ann = store.join(code)
    qid = store.ask(code, key, 0)
    for _ in range(20):
        _guess(store, code, ann, qid)
    with pytest.raises(RateLimited):
        _guess(store, code, ann, qid)
    clock.now += 61
    _guess(store, code, ann, qid)


def test_a_class_expires_and_the_operator_can_delete_one(store, clock):
    code, key = store.create()
    store.join(code)
    clock.now += 1.9 * 3600
    store.set_recipe(code, key, {"prompt": "Hi"})  # a teacher action keeps it open
    clock.now += 1.9 * 3600
    assert store.info(code) is not None and store.codes() == [code]
    clock.now += 0.2 * 3600
    assert store.info(code) is None and store.version(code) is None and store.codes() == []
    with pytest.raises(ClassError):
        store.join(code)
    other, _ = store.create()  # creating sweeps expired classes out of the file
    assert store.students(code) == []
    assert store.delete(other) and not store.delete(other) and store.info(other) is None


def test_a_restarted_server_finds_the_class_and_every_guess(class_db, clock):
    path = class_db
    first = ClassStore(path, clock=clock)
    code, key = first.create()
    ann = first.join(code, "Ann")
    first.set_recipe(code, key, {"prompt": "The capital of France is", "steps": 2})
    qid = first.ask(code, key, 2)
    _guess(first, code, ann, qid)
    version = first.version(code)
    del first
    again = ClassStore(path, clock=clock)
    info = again.info(code)
    assert info.recipe == {"prompt": "The capital of France is", "steps": 2} and info.open_question == qid
    assert info.version == version and again.is_teacher(code, key)
    assert [(s.student, s.nickname) for s in again.students(code)] == [(ann, "Ann")]
    assert [(g.student, g.text, g.prob) for g in again.guesses(code, qid)] == [(ann, "Paris", 0.5)]


def test_a_replica_tag_starts_every_code(store, monkeypatch):
    from autoreg_server.class_store import replica_tag

    assert replica_tag() == ""
    monkeypatch.setenv("AUTOREG_REPLICA_TAG", "0")
    assert replica_tag() == ""  # not in the alphabet
    monkeypatch.setenv("AUTOREG_REPLICA_TAG", "b")
    codes = [store.create()[0] for _ in range(10)]
    assert all(c.startswith("B") and len(c) == CODE_LENGTH and set(c) <= set(ALPHABET) for c in codes)


def test_students_news_moves_activity_and_teacher_changes_move_the_version(store):
    code, key = store.create()
    start = store.pulse(code)
    ann = store.join(code, "Ann")
    assert store.pulse(code) == (start[0], start[1] + 1)  # followers need not redraw for a join
    store.seen(code, ann, "following", "class")
    store.seen(code, ann, "following", "class")  # the same place again: no news
    assert store.pulse(code) == (start[0], start[1] + 2)
    store.seen(code, ann, "exploring", "step")
    assert store.pulse(code)[1] == start[1] + 3
    store.set_recipe(code, key, {"prompt": "x"})
    assert store.pulse(code)[0] == start[0] + 1


def test_wrong_teacher_keys_are_refused_and_slowed(store, clock):
    from autoreg_server.class_store import KEY_FAILS_PER_MINUTE

    code, key = store.create()
    store.claim_teacher(code, key, source="t")
    for _ in range(KEY_FAILS_PER_MINUTE):
        with pytest.raises(NotTeacher):
            store.claim_teacher(code, "guess", source="guesser")
    with pytest.raises(RateLimited):
        store.claim_teacher(code, "guess", source="guesser")  # the next wrong key is slowed
    store.claim_teacher(code, key, source="guesser")  # the right key always works, from the same source too
    store.claim_teacher(code, key, source="t")
    clock.now += 61
    with pytest.raises(NotTeacher):
        store.claim_teacher(code, "guess", source="guesser")  # a minute later a wrong key is only refused


def test_sources_are_kept_only_as_hashes(store, stored_bytes):
    code, _ = store.create()
    with pytest.raises(ClassError):
        store.join("WRONG2", source="203.0.113.77")
    assert store.students(code) == [] and b"203.0.113.77" not in stored_bytes(store)


def test_a_sampling_round_takes_one_draw_per_student_while_open(store):
    code, key = store.create()
    ann, bob = store.join(code, "Ann"), store.join(code, "Bob")
    config = {"temperature": 1.2, "seed": 0}
    with pytest.raises(NotTeacher):
        store.start_round(code, ann, 2, 4, config, [1, 2, 3])
    with pytest.raises(ClassError, match="1 to"):
        store.start_round(code, key, 2, 99, config, [1, 2, 3])
    v = store.version(code)
    rid = store.start_round(code, key, 2, 4, config, [1, 2, 3])
    assert store.info(code).open_round == rid and store.version(code) == v + 1
    assert store.round(code, rid).context == (1, 2, 3) and store.round(code, rid).config == config
    store.add_draw(code, ann, rid, [5, 6, 7, 8], seed=11)
    with pytest.raises(ClassError, match="already drawn"):
        store.add_draw(code, ann, rid, [5], seed=11)
    with pytest.raises(ClassError, match="1 to 4"):
        store.add_draw(code, bob, rid, [1, 2, 3, 4, 5], seed=12)
    store.add_draw(code, bob, rid, [5, 9], seed=12)
    drawn = [(d.student, d.tokens, d.seed) for d in store.draws(code, rid)]
    assert drawn == [(ann, (5, 6, 7, 8), 11), (bob, (5, 9), 12)]
    rid2 = store.start_round(code, key, 2, 4, {"temperature": 0.2}, [1, 2, 3])
    with pytest.raises(ClassError, match="closed"):
        store.add_draw(code, bob, rid, [5], seed=1)  # only the open round takes draws
    store.close_round(code, key)
    with pytest.raises(ClassError, match="closed"):
        store.add_draw(code, bob, rid2, [5], seed=1)
    assert [r.id for r in store.rounds(code)] == [rid, rid2]
    store.end(code, key)
    assert store.rounds(code) == [] and store.draws(code, rid) == []


def test_the_operator_lists_and_deletes_classes(class_db, capsys):
    from autoreg_server.class_store import main

    db = class_db
    code, _ = ClassStore(db).create()
    assert main(["list", "--db", str(db)]) == 0 and code in capsys.readouterr().out
    assert main(["delete", code, "--db", str(db)]) == 0 and "deleted" in capsys.readouterr().out
    assert main(["delete", code, "--db", str(db)]) == 1 and "no such class" in capsys.readouterr().out


def test_many_sources_together_are_slowed_too(class_db, clock):
    from autoreg_server.class_store import ALL_JOIN_FAILS_PER_MINUTE

    store = ClassStore(class_db, clock=clock)
    code, _ = store.create()
    outcomes = []
    for i in range(1000):  # a thousand wrong codes, each from a new address
        try:
            store.join("WRONG" + ALPHABET[i % len(ALPHABET)], source=f"10.1.{i // 256}.{i % 256}")
            outcomes.append("in")
        except RateLimited:
            outcomes.append("slowed")
        except ClassError:
            outcomes.append("refused")
    assert outcomes.count("in") == 0 and outcomes.count("refused") == ALL_JOIN_FAILS_PER_MINUTE
    assert outcomes.count("slowed") == 1000 - ALL_JOIN_FAILS_PER_MINUTE


def test_a_round_keeps_the_stop_the_teacher_was_on_when_it_started(store):
    code, key = store.create()
    off_path = store.start_round(code, key, 0, 2, {}, [1])
    stop_3 = {"number": 3, "total": 9, "title": "Attention", "page": "attention", "params": [["prompt", "Hi"]]}
    store.set_stop(code, key, stop_3)
    at_3 = store.start_round(code, key, 1, 2, {}, [1, 2])
    store.set_stop(code, key, {**stop_3, "number": 4, "title": "The cache"})  # the teacher moves on: rounds keep theirs
    at_4 = store.start_round(code, key, 1, 2, {}, [1, 2])
    assert [store.round(code, r).stop for r in (off_path, at_3, at_4)] == [
        None, stop_3, {**stop_3, "number": 4, "title": "The cache"}]
    assert [r.stop for r in store.rounds(code)] == [None, stop_3, {**stop_3, "number": 4, "title": "The cache"}]
    other, other_key = store.create()  # another class's stop is not this round's
    assert store.round(other, store.start_round(other, other_key, 0, 2, {}, [1])).stop is None
