"""Rate limits: counted per source and kind in the last minute, refused with how long to wait, sources kept
only as hashes, attempts forgotten after an hour."""
import pytest

from autoreg_server.class_store import ClassStore, rates
from autoreg_server.class_store.records import RateLimited


@pytest.fixture
def db(class_db):
    with ClassStore(class_db)._db() as db:
        yield db


def test_a_source_is_kept_as_a_short_stable_hash():
    h = rates.source_hash("203.0.113.77")
    assert h == rates.source_hash("203.0.113.77") != rates.source_hash("203.0.113.78")
    assert len(h) == 24 and "203" not in h


def test_a_source_is_refused_past_its_limit_per_minute_and_kind(db):
    for i in range(3):
        rates.refuse_if_busy(db, 100.0 + i, "a", "guess", 3, "guesses")
        rates.count(db, 100.0 + i, "guess", "a")
    with pytest.raises(RateLimited, match="Too many guesses in a minute; wait 58 s") as refused:
        rates.refuse_if_busy(db, 102.0, "a", "guess", 3, "guesses")
    assert refused.value.retry_after_s == 58.0
    rates.refuse_if_busy(db, 102.0, "b", "guess", 3, "guesses")  # another source
    rates.refuse_if_busy(db, 102.0, "a", "key-fail", 3, "keys")  # another kind
    rates.refuse_if_busy(db, 160.5, "a", "guess", 3, "guesses")  # the first attempt is a minute old


def test_one_attempt_counts_against_every_source_given(db):
    rates.count(db, 5.0, "join-fail", "10.0.0.1", rates.EVERYONE)
    kept = db.execute("SELECT source, kind FROM attempts ORDER BY source").fetchall()
    assert sorted(kept) == sorted([(rates.source_hash("10.0.0.1"), "join-fail"),
                                   (rates.source_hash(rates.EVERYONE), "join-fail")])
    with pytest.raises(RateLimited):
        rates.refuse_if_busy(db, 6.0, rates.EVERYONE, "join-fail", 1, "wrong class codes on this server")


def test_attempts_older_than_an_hour_are_forgotten(db):
    rates.count(db, 0.0, "guess", "old")
    rates.count(db, 10.0, "guess", "new")
    rates.forget_old(db, rates.KEPT_S + 5.0)
    assert [r[0] for r in db.execute("SELECT source FROM attempts")] == [rates.source_hash("new")]
