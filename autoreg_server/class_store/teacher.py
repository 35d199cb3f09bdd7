"""The teacher's transactions: create a class, claim it with the key, change it (recipe, options, questions,
sampling rounds, students), end it; and the operator's delete.

Only a caller holding the teacher key changes a class. The key is shown once, to the teacher's tab, and kept
here only as a SHA-256 hash; a wrong key is refused with ``NotTeacher``. Every change moves the class's
``version`` (every tab of the class redraws) and keeps the class open ``hours`` longer.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from autoreg_server.class_store import rates
from autoreg_server.class_store.codes import new_code, normal_code, replica_tag
from autoreg_server.class_store.core import StoreCore
from autoreg_server.class_store.records import ClassError, NotTeacher
from autoreg_server.class_store.sqlite import Connection  # or postgres.Connection: the same execute

MAX_QUESTIONS = 200  # per class
MAX_ROUNDS = 100  # sampling rounds per class
MAX_DRAW_TOKENS = 12  # tokens per student per sampling round
MAX_CONTEXT = 8192  # token ids of the text a round samples from


def key_hash(key: str) -> str:
    """What the file keeps of a teacher key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class TeacherActions(StoreCore):
    # ------------------------------------------------------------ the class and its key
    def create(self) -> tuple[str, str]:
        """A new class: (join code, teacher key). The key is returned once and stored only as a hash."""
        now = self.clock()
        key = secrets.token_urlsafe(24)
        with self._tx() as db:
            self._expire(db, now)
            count = db.execute("SELECT COUNT(*) FROM classes").fetchone()[0]
            if count >= self.max_classes:
                raise ClassError(f"This server already holds {count} classes, its limit; end one first "
                                 "(or ask the operator).")
            for _ in range(20):
                code = new_code(replica_tag())
                if db.execute("SELECT 1 FROM classes WHERE code = ?", (code,)).fetchone() is None:
                    break
            else:
                raise ClassError("No free class code was found; try again.")
            db.execute("INSERT INTO classes (code, teacher_hash, created, touched, expires) VALUES (?, ?, ?, ?, ?)",
                       (code, key_hash(key), now, now, now + self.hours * 3600))
        return code, key

    def is_teacher(self, code: str, key: str | None) -> bool:
        if not key:
            return False
        with self._db() as db:
            row = db.execute("SELECT teacher_hash FROM classes WHERE code = ?", (normal_code(code),)).fetchone()
        return row is not None and hmac.compare_digest(row[0], key_hash(key))

    def claim_teacher(self, code: str, key: str, source: str = "") -> None:
        """A tab that presents a teacher key (in its address): accepted, or refused with a message.

        The right key always works, whatever came before it from the same address (a school's students share
        one); only wrong keys count against ``source`` and are slowed like wrong codes.
        """
        code = normal_code(code)
        with self._tx() as db:
            try:
                self._teacher(db, code, key)
                return
            except NotTeacher:
                rates.refuse_if_busy(db, self.clock(), source, "key-fail", rates.KEY_FAILS_PER_MINUTE,
                                     "wrong teacher keys")
                rates.count(db, self.clock(), "key-fail", source)
        raise NotTeacher("This address carries a teacher key that is not this class's: it was refused, and this "
                         "tab can only join as a student.")

    @contextmanager
    def _as_teacher(self, code: str, key: str | None) -> Iterator[tuple[Connection, str]]:
        """A write transaction in which ``key`` was checked to be the class's teacher key: (db, the code as stored)."""
        code = normal_code(code)
        with self._tx() as db:
            self._teacher(db, code, key)
            yield db, code
        self._changed_here(code)  # committed: this process's class feed reads it now

    def _teacher(self, db: Connection, code: str, key: str | None) -> None:
        row = db.execute("SELECT teacher_hash, expires FROM classes WHERE code = ?", (code,)).fetchone()
        if row is None or row[1] <= self.clock():
            raise ClassError("This class has ended or expired.")
        if not key or not hmac.compare_digest(row[0], key_hash(key)):
            raise NotTeacher("Only the teacher of this class can do that; this tab does not hold the class's "
                             "teacher key.")

    def _bump(self, db: Connection, code: str) -> None:
        """A teacher change: every tab of the class redraws; the class stays open ``hours`` longer."""
        now = self.clock()
        db.execute("UPDATE classes SET version = version + 1, touched = ?, expires = ? WHERE code = ?",
                   (now, now + self.hours * 3600, code))
        self.backend.changed(db, code)  # PostgreSQL: NOTIFY at commit

    # ------------------------------------------------------------ what the class shows
    def set_recipe(self, code: str, key: str, recipe: dict) -> int:
        """The teacher's session after an action, as a replay recipe; returns the new version."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE classes SET recipe = ? WHERE code = ?", (json.dumps(recipe), code))
            self._bump(db, code)
            return db.execute("SELECT version FROM classes WHERE code = ?", (code,)).fetchone()[0]

    def set_options(self, code: str, key: str, *, names_on: bool | None = None,
                    leaderboard: bool | None = None) -> None:
        with self._as_teacher(code, key) as (db, code):
            if names_on is not None:
                db.execute("UPDATE classes SET names_on = ? WHERE code = ?", (int(names_on), code))
            if leaderboard is not None:
                db.execute("UPDATE classes SET leaderboard = ? WHERE code = ?", (int(leaderboard), code))
            self._bump(db, code)

    def remove(self, code: str, key: str, student: str) -> None:
        """The teacher removes a student: their tab leaves the class and cannot rejoin with the same id."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE students SET removed = 1 WHERE code = ? AND student = ?", (code, student))
            self._bump(db, code)

    def set_stop(self, code: str, key: str, stop: dict | None) -> None:
        """The lesson path's stop the teacher is on (title, page, link, number), or None off a path: each
        student's page says where the class is and offers exploring there."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("DELETE FROM stops WHERE code = ?", (code,))
            if stop is not None:
                db.execute("INSERT INTO stops (code, stop) VALUES (?, ?)", (code, json.dumps(stop)))
            self._bump(db, code)

    # ------------------------------------------------------------ questions
    def ask(self, code: str, key: str, step: int) -> int:
        """The teacher asks the class for the next token after ``step`` tokens; the new question's id."""
        with self._as_teacher(code, key) as (db, code):
            asked = db.execute("SELECT COUNT(*) FROM questions WHERE code = ?", (code,)).fetchone()[0]
            if asked >= MAX_QUESTIONS:
                raise ClassError(f"This class has asked {asked} questions, its limit: start a new class.")
            qid = db.execute("INSERT INTO questions (code, step, asked) VALUES (?, ?, ?) RETURNING id",
                             (code, int(step), self.clock())).fetchall()[0][0]
            db.execute("UPDATE classes SET open_question = ? WHERE code = ?", (qid, code))
            self._bump(db, code)
            return qid

    def reveal(self, code: str, key: str, qid: int, model: dict) -> None:
        """Close the question with what the model said (its choice and top tokens)."""
        with self._as_teacher(code, key) as (db, code):
            q = db.execute("SELECT revealed FROM questions WHERE code = ? AND id = ?", (code, int(qid))).fetchone()
            if q is None:
                raise ClassError("This question does not exist in this class.")
            db.execute("UPDATE questions SET revealed = ?, model = ? WHERE id = ?",
                       (self.clock(), json.dumps(model), int(qid)))
            db.execute("UPDATE classes SET open_question = ? WHERE code = ?", (int(qid), code))
            self._bump(db, code)

    def close_question(self, code: str, key: str) -> None:
        """The teacher moves on: no question is shown any more."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE classes SET open_question = NULL WHERE code = ?", (code,))
            self._bump(db, code)

    # ------------------------------------------------------------ everyone samples
    def start_round(self, code: str, key: str, step: int, tokens: int, config: dict, context: list[int]) -> int:
        """The teacher asks every student's tab to draw ``tokens`` tokens after ``context``; the round's id. The round
        keeps the lesson stop the teacher is on now (``set_stop``), read in the same transaction."""
        if not 1 <= int(tokens) <= MAX_DRAW_TOKENS:
            raise ClassError(f"A draw is 1 to {MAX_DRAW_TOKENS} tokens.")
        if not context or len(context) > MAX_CONTEXT:
            raise ClassError(f"The text to sample from must have 1 to {MAX_CONTEXT} tokens.")
        with self._as_teacher(code, key) as (db, code):
            held = db.execute("SELECT COUNT(*) FROM rounds WHERE code = ?", (code,)).fetchone()[0]
            if held >= MAX_ROUNDS:
                raise ClassError(f"This class has sampled {held} times, its limit: start a new class.")
            rid = db.execute("INSERT INTO rounds (code, step, tokens, config, context, created, stop) "
                             "VALUES (?, ?, ?, ?, ?, ?, (SELECT stop FROM stops WHERE code = ?)) RETURNING id",
                             (code, int(step), int(tokens), json.dumps(config), json.dumps([int(t) for t in context]),
                              self.clock(), code)).fetchall()[0][0]
            db.execute("UPDATE classes SET open_round = ? WHERE code = ?", (rid, code))
            self._bump(db, code)
            return rid

    def close_round(self, code: str, key: str) -> None:
        """The teacher moves on: students stop drawing (the rounds and their trees are kept)."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE classes SET open_round = NULL WHERE code = ?", (code,))
            self._bump(db, code)

    # ------------------------------------------------------------ the end of a class
    def end(self, code: str, key: str) -> None:
        """The teacher ends the class: it and everything in it are deleted."""
        with self._as_teacher(code, key) as (db, code):
            self._delete(db, code)

    def delete(self, code: str) -> bool:
        """The operator deletes a class (no key: whoever runs the server may); True if it existed."""
        code = normal_code(code)
        with self._tx() as db:
            existed = db.execute("SELECT 1 FROM classes WHERE code = ?", (code,)).fetchone() is not None
            self._delete(db, code)
        return existed

    def _delete(self, db: Connection, code: str) -> None:
        db.execute("DELETE FROM guesses WHERE question IN (SELECT id FROM questions WHERE code = ?)", (code,))
        db.execute("DELETE FROM questions WHERE code = ?", (code,))
        db.execute("DELETE FROM draws WHERE round IN (SELECT id FROM rounds WHERE code = ?)", (code,))
        db.execute("DELETE FROM rounds WHERE code = ?", (code,))
        db.execute("DELETE FROM students WHERE code = ?", (code,))
        db.execute("DELETE FROM stops WHERE code = ?", (code,))
        db.execute("DELETE FROM classes WHERE code = ?", (code,))
        self.backend.changed(db, code)

    def _expire(self, db: Connection, now: float) -> None:
        """Sweep expired classes (and old rate-limit attempts) out of the file."""
        for (code,) in db.execute("SELECT code FROM classes WHERE expires <= ?", (now,)).fetchall():
            self._delete(db, code)
        rates.forget_old(db, now)
