"""What every tab reads: the class and its counters (``version`` for followers, ``activity`` for the teacher),
its students, questions and guesses, scores, sampling rounds and draws, and the operator's list of classes.

Reads never take the write lock (WAL: they never wait for the one writer). A class past its expiry reads as
gone even before a sweep has deleted it.
"""
from __future__ import annotations

import json
import time

from autoreg_server.class_store.codes import normal_code
from autoreg_server.class_store.core import StoreCore
from autoreg_server.class_store.records import ClassInfo, Draw, Guess, Question, Round, Student


class ClassReads(StoreCore):
    # ------------------------------------------------------------ the class
    def info(self, code: str) -> ClassInfo | None:
        """The class, or None when there is no such open class."""
        with self._db() as db:
            row = db.execute("SELECT code, created, expires, recipe, version, names_on, leaderboard, open_question, "
                             "activity, open_round FROM classes WHERE code = ?", (normal_code(code),)).fetchone()
        if row is None or row[2] <= self.clock():
            return None
        return ClassInfo(row[0], row[1], row[2], json.loads(row[3]) if row[3] else None, row[4], bool(row[5]),
                         bool(row[6]), row[7], row[8], row[9])

    def version(self, code: str) -> int | None:
        """The class's version (cheap: a follower polls it), or None when the class is gone."""
        found = self.pulse(code)
        return None if found is None else found[0]

    def pulse(self, code: str) -> tuple[int, int] | None:
        """(version, activity), one indexed read: what the teacher's page polls; None when the class is gone."""
        with self._db() as db:
            row = db.execute("SELECT version, activity, expires FROM classes WHERE code = ?",
                             (normal_code(code),)).fetchone()
        return None if row is None or row[2] <= self.clock() else (row[0], row[1])

    def wait_for_change(self, code: str, version: int | None, timeout: float) -> int | None:
        """Block until the class's version is not ``version`` (or ``timeout`` seconds passed); the version then
        (None: the class is gone). On PostgreSQL a teacher's change wakes the waiter at once (``NOTIFY``, one
        listener thread per process fanning out to every waiter); on SQLite the waiter reads the version every
        ``recheck_s``. Either way it also reads it every ``recheck_s``, so nothing is missed for longer."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self.backend.watch(normal_code(code)) as woken:
            while True:
                now = self.watched_version(code)
                left = deadline - time.monotonic()
                if now != version or left <= 0:
                    return now
                woken.wait(min(left, self.backend.recheck_s))
                woken.clear()

    def watched_version(self, code: str) -> int | None:
        """The version as a waiter reads it. On PostgreSQL, while the listener is in force, the last read of
        this process stands (for at most ``recheck_s``, and not past the class's expiry) until the listener hears
        of the class or reconnects: the stamp is taken before the read, so a change committed after the read
        has moved it. One read then serves every follower of the class on this replica. SQLite: one read."""
        code = normal_code(code)
        stamp = self.backend.stamp(code)
        if stamp is not None:
            held = self._versions.get(code)
            if (held is not None and held[0] == stamp and time.monotonic() - held[1] < self.backend.recheck_s
                    and held[3] > self.clock()):
                return held[2]
        with self._db() as db:
            row = db.execute("SELECT version, expires FROM classes WHERE code = ?", (code,)).fetchone()
        if stamp is not None and row is not None:
            self._versions[code] = (stamp, time.monotonic(), row[0], row[1])
        return None if row is None or row[1] <= self.clock() else row[0]

    def codes(self) -> list[str]:
        """Open classes, oldest first (for the operator)."""
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT code FROM classes WHERE expires > ? ORDER BY created",
                                              (self.clock(),))]

    def stop(self, code: str) -> dict | None:
        """The lesson path's stop the teacher is on (``set_stop``), or None."""
        with self._db() as db:
            row = db.execute("SELECT stop FROM stops WHERE code = ?", (normal_code(code),)).fetchone()
        return None if row is None else json.loads(row[0])

    # ------------------------------------------------------------ students
    def student(self, code: str, student: str) -> Student | None:
        with self._db() as db:
            row = db.execute("SELECT student, nickname, mode, page, seen, removed FROM students "
                             "WHERE code = ? AND student = ?", (normal_code(code), student)).fetchone()
        return None if row is None else Student(row[0], row[1], row[2], row[3], row[4], bool(row[5]))

    def students(self, code: str) -> list[Student]:
        with self._db() as db:
            rows = db.execute("SELECT student, nickname, mode, page, seen, removed FROM students WHERE code = ? "
                              "ORDER BY joined", (normal_code(code),)).fetchall()
        return [Student(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    # ------------------------------------------------------------ questions and guesses
    def question(self, code: str, qid: int | None) -> Question | None:
        if qid is None:
            return None
        with self._db() as db:
            row = db.execute("SELECT id, step, asked, revealed, model FROM questions WHERE code = ? AND id = ?",
                             (normal_code(code), int(qid))).fetchone()
        return None if row is None else Question(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else {})

    def questions(self, code: str) -> list[Question]:
        """Every question the class was asked, oldest first (what the class record numbers 1, 2, …)."""
        with self._db() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM questions WHERE code = ? ORDER BY id",
                                            (normal_code(code),))]
        return [q for q in (self.question(code, qid) for qid in ids) if q is not None]

    def guesses(self, code: str, qid: int) -> list[Guess]:
        with self._db() as db:
            rows = db.execute("SELECT g.student, g.text, g.token, g.tokens, g.prob, g.rank, g.score FROM guesses g "
                              "JOIN questions q ON q.id = g.question WHERE q.code = ? AND g.question = ? "
                              f"ORDER BY g.at, g.{self.backend.tiebreak}",
                              (normal_code(code), int(qid))).fetchall()
        return [Guess(*r) for r in rows]

    def scores(self, code: str) -> dict[str, float]:
        """Each student's total score over the class's revealed questions."""
        with self._db() as db:
            rows = db.execute("SELECT g.student, SUM(g.score) FROM guesses g JOIN questions q ON q.id = g.question "
                              "WHERE q.code = ? AND q.revealed IS NOT NULL GROUP BY g.student",
                              (normal_code(code),)).fetchall()
        return {r[0]: r[1] for r in rows}

    def answered(self, code: str, student: str) -> int:
        """How many revealed questions this student guessed (what their total score is over)."""
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM guesses g JOIN questions q ON q.id = g.question "
                              "WHERE q.code = ? AND q.revealed IS NOT NULL AND g.student = ?",
                              (normal_code(code), student)).fetchone()[0]

    # ------------------------------------------------------------ everyone samples
    def round(self, code: str, rid: int | None) -> Round | None:
        if rid is None:
            return None
        with self._db() as db:
            row = db.execute("SELECT id, step, tokens, config, context, created, stop FROM rounds "
                             "WHERE code = ? AND id = ?", (normal_code(code), int(rid))).fetchone()
        return None if row is None else Round(row[0], row[1], row[2], json.loads(row[3]), tuple(json.loads(row[4])),
                                              row[5], None if row[6] is None else json.loads(row[6]))

    def rounds(self, code: str) -> list[Round]:
        """Every sampling round of the class, oldest first."""
        with self._db() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM rounds WHERE code = ? ORDER BY id", (normal_code(code),))]
        return [self.round(code, rid) for rid in ids]

    def draws(self, code: str, rid: int) -> list[Draw]:
        with self._db() as db:
            rows = db.execute("SELECT d.student, d.tokens, d.seed FROM draws d JOIN rounds r ON r.id = d.round "
                              f"WHERE r.code = ? AND d.round = ? ORDER BY d.at, d.{self.backend.tiebreak}",
                              (normal_code(code), int(rid))).fetchall()
        return [Draw(r[0], tuple(json.loads(r[1])), r[2]) for r in rows]
