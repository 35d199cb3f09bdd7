"""What a student's tab writes: joining a class, saying where it is, guessing, drawing for a sampling round.

Each write moves the class's ``activity``, which only the teacher's page watches: thirty guesses do not
redraw thirty followers thirty times. A student removed by the teacher writes nothing more.
"""
from __future__ import annotations

import json
import secrets

from autoreg_server.class_store import rates
from autoreg_server.class_store.codes import clean_nickname, normal_code
from autoreg_server.class_store.core import StoreCore
from autoreg_server.class_store.records import ClassError
from autoreg_server.class_store.sqlite import Connection

GUESS_MAX = 40  # characters of a guess
MODES = ("following", "exploring")


class SeatActions(StoreCore):
    def join(self, code: str, nickname: str = "", source: str = "") -> str:
        """A student joins: their anonymous id. A wrong code counts against ``source`` (the tab or address)."""
        code, nickname = normal_code(code), clean_nickname(nickname)
        now = self.clock()
        with self._tx() as db:
            rates.refuse_if_busy(db, self.clock(), source, "join-fail", rates.JOIN_FAILS_PER_MINUTE,
                                 "wrong class codes")
            rates.refuse_if_busy(db, self.clock(), rates.EVERYONE, "join-fail", rates.ALL_JOIN_FAILS_PER_MINUTE,
                                 "wrong class codes on this server")
            row = db.execute("SELECT expires FROM classes WHERE code = ?", (code,)).fetchone()
            wrong = row is None or row[0] <= now
            if wrong:  # counted (committed) before the refusal below
                rates.count(db, now, "join-fail", source, rates.EVERYONE)
        if wrong:
            raise ClassError("There is no open class with this code: check it with your teacher.")
        with self._tx() as db:
            row = db.execute("SELECT expires FROM classes WHERE code = ?", (code,)).fetchone()
            if row is None or row[0] <= now:
                raise ClassError("This class has just ended.")
            seated = db.execute("SELECT COUNT(*) FROM students WHERE code = ? AND removed = 0", (code,)).fetchone()[0]
            if seated >= self.max_students:
                raise ClassError(f"This class is full ({seated} students).")
            student = secrets.token_urlsafe(12)
            db.execute("INSERT INTO students (code, student, nickname, joined, seen) VALUES (?, ?, ?, ?, ?)",
                       (code, student, nickname, now, now))
            self._stir(db, code)
        return student

    def seen(self, code: str, student: str, mode: str, page: str) -> None:
        """A student's tab reports where it is (following or exploring, which page)."""
        if mode not in MODES:
            raise ClassError(f"Unknown mode {mode!r}.")
        code, page = normal_code(code), str(page)[:40]
        with self._tx() as db:
            moved = db.execute("UPDATE students SET seen = ?, mode = ?, page = ? WHERE code = ? AND student = ? "
                               "AND removed = 0 AND (mode != ? OR page != ?)",
                               (self.clock(), mode, page, code, student, mode, page)).rowcount
            if moved:
                self._stir(db, code)
            else:
                db.execute("UPDATE students SET seen = ? WHERE code = ? AND student = ?", (self.clock(), code, student))

    def guess(self, code: str, student: str, qid: int, text: str, token: int, tokens: int, prob: float, rank: int,
              score: float) -> None:
        """A student's guess for the open question (a new guess replaces their earlier one)."""
        code = normal_code(code)
        now = self.clock()
        with self._tx() as db:
            self._member(db, code, student)
            q = db.execute("SELECT revealed FROM questions WHERE code = ? AND id = ?", (code, int(qid))).fetchone()
            if q is None:
                raise ClassError("This question does not exist in your class.")
            if q[0] is not None:
                raise ClassError("The answer has been revealed: guesses are closed for this question.")
            rates.refuse_if_busy(db, self.clock(), student, "guess", rates.GUESSES_PER_MINUTE, "guesses")
            rates.count(db, now, "guess", student)
            db.execute(self.backend.replace_guess, (int(qid), student, str(text)[:GUESS_MAX], int(token), int(tokens),
                                                    float(prob), int(rank), float(score), now))
            self._stir(db, code)

    def add_draw(self, code: str, student: str, rid: int, tokens: list[int], seed: int) -> None:
        """A student's tab's draw for the open round (one per student and round: a second is refused)."""
        code = normal_code(code)
        with self._tx() as db:
            self._member(db, code, student)
            row = db.execute("SELECT r.tokens, c.open_round FROM rounds r JOIN classes c ON c.code = r.code "
                             "WHERE r.code = ? AND r.id = ?", (code, int(rid))).fetchone()
            if row is None or row[1] != int(rid):
                raise ClassError("This sampling round is closed.")
            if not 1 <= len(tokens) <= row[0] or any(not 0 <= int(t) < 1 << 24 for t in tokens):
                raise ClassError(f"A draw for this round is 1 to {row[0]} token ids.")
            if db.execute("SELECT 1 FROM draws WHERE round = ? AND student = ?", (int(rid), student)).fetchone():
                raise ClassError("Your tab has already drawn for this round.")
            db.execute("INSERT INTO draws (round, student, tokens, seed, at) VALUES (?, ?, ?, ?, ?)",
                       (int(rid), student, json.dumps([int(t) for t in tokens]), int(seed), self.clock()))
            self._stir(db, code)

    @staticmethod
    def _member(db: Connection, code: str, student: str) -> None:
        """Refuse a student who is not (or no longer) seated in the class."""
        me = db.execute("SELECT removed FROM students WHERE code = ? AND student = ?", (code, student)).fetchone()
        if me is None or me[0]:
            raise ClassError("You are not in this class (any more): join again with the class link.")

    @staticmethod
    def _stir(db: Connection, code: str) -> None:
        """A student's news (joined, guessed, drew, moved): only the teacher's page redraws."""
        db.execute("UPDATE classes SET activity = activity + 1 WHERE code = ?", (code,))
