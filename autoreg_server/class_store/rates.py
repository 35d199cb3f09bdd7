"""Rate limits per source: wrong class codes, wrong teacher keys and guesses, each counted in the ``attempts``
table and refused with ``RateLimited`` past so many a minute.

A source (an address, a tab, a student id) is kept only as a hash, and only for an hour, so the file identifies
no student beyond the nickname they chose.
"""
from __future__ import annotations

import hashlib

from autoreg_server.class_store.records import RateLimited
from autoreg_server.class_store.sqlite import Connection

JOIN_FAILS_PER_MINUTE = 20  # wrong codes per source per minute before it is slowed (a class behind one
#                             address makes a few typos; a guesser needs ~10⁸ tries for a 6-character code)
ALL_JOIN_FAILS_PER_MINUTE = 300  # wrong codes from every source together: many tabs or addresses gain nothing
KEY_FAILS_PER_MINUTE = 5  # wrong teacher keys per source per minute
EVERYONE = "*"  # the source that counts every attempt
GUESSES_PER_MINUTE = 20  # guesses (and changes of guess) per student per minute
KEPT_S = 3600  # how long an attempt is kept


def source_hash(source: str) -> str:
    """What the rate limits keep of a source (an address or a tab): a hash, never the address itself."""
    return hashlib.sha256(("autoreg-source:" + str(source)).encode("utf-8")).hexdigest()[:24]


def refuse_if_busy(db: Connection, now: float, source: str, kind: str, per_minute: int, what: str) -> None:
    """Refuse when ``source`` made ``per_minute`` attempts of ``kind`` in the minute before ``now``."""
    recent = db.execute("SELECT COUNT(*), MIN(at) FROM attempts WHERE source = ? AND kind = ? AND at > ?",
                        (source_hash(source), kind, now - 60)).fetchone()
    if recent[0] >= per_minute:
        wait = max(1.0, 60 - (now - recent[1]))
        raise RateLimited(f"Too many {what} in a minute; wait {wait:.0f} s and try again.", wait)


def count(db: Connection, now: float, kind: str, *sources: str) -> None:
    """One attempt of ``kind`` at ``now`` against each of ``sources``."""
    db.executemany("INSERT INTO attempts (source, kind, at) VALUES (?, ?, ?)",
                   [(source_hash(source), kind, now) for source in sources])


def forget_old(db: Connection, now: float) -> None:
    """Drop attempts older than ``KEPT_S``: no limit looks back that far."""
    db.execute("DELETE FROM attempts WHERE at < ?", (now - KEPT_S,))
