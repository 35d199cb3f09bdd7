"""A class kept in SQLite: its join code, the teacher's key (hashed), students, the teacher's steps, questions
and guesses. Pure Python (stdlib ``sqlite3``), no Streamlit: tests drive it with a temporary file and a fake
clock.

Why SQLite: a class must outlive the server process. A server restarted in the middle of a lesson reopens
the same file, and every tab that comes back (teacher or student) finds its class, its place and every
guess. One file per server (``AUTOREG_CLASS_DB``, default under the app's cache dir); with several replicas
the class code routes each member to the replica that holds the file (the README says what a shared store
would add).

Who may do what: only a caller holding the teacher key changes a class (step, ask, reveal, sample, end,
remove a student, settings). The key is shown once, to the teacher's tab, and stored here only as a SHA-256
hash; a student's tab never sees it. A wrong key is refused with ``NotTeacher``. Wrong class codes, wrong
teacher keys and guesses are rate-limited per source (``RateLimited`` says how long to wait); a source is
kept only as a hash, for an hour, so nothing here identifies a student beyond the nickname they chose.

Two counters tell tabs when to redraw: ``version`` moves on every teacher change (followers redraw), and
``activity`` on what students send (joins, guesses, draws, which page they are on): only the teacher's
page watches it, so thirty guesses do not redraw thirty followers thirty times.

Operators: ``python -m autoreg_ui.classroom.store list`` and ``python -m autoreg_ui.classroom.store delete CODE``.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ENV_DB = "AUTOREG_CLASS_DB"
ENV_HOURS = "AUTOREG_CLASS_HOURS"
ENV_REPLICA_TAG = "AUTOREG_REPLICA_TAG"
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L look-alikes
CODE_LENGTH = 6
NICKNAME_MAX = 24
GUESS_MAX = 40
MAX_STUDENTS = 60  # per class
MAX_CLASSES = 50  # open classes per server
DEFAULT_HOURS = 6.0  # a class expires this long after its last teacher action
JOIN_FAILS_PER_MINUTE = 20  # wrong codes per source per minute before it is slowed (a class behind one
#                             address makes a few typos; a guesser needs ~10⁸ tries for a 6-character code)
ALL_JOIN_FAILS_PER_MINUTE = 300  # wrong codes from every source together: many tabs or addresses gain nothing
KEY_FAILS_PER_MINUTE = 5  # wrong teacher keys per source per minute
EVERYONE = "*"  # the source that counts every attempt
GUESSES_PER_MINUTE = 20  # guesses (and changes of guess) per student per minute
MAX_QUESTIONS = 200  # per class
MAX_ROUNDS = 100  # sampling rounds per class
MAX_DRAW_TOKENS = 12  # tokens per student per sampling round
MAX_CONTEXT = 8192  # token ids of the text a round samples from
MODES = ("following", "exploring")

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, teacher_hash TEXT NOT NULL, created REAL NOT NULL, touched REAL NOT NULL,
    expires REAL NOT NULL, recipe TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 0,
    names_on INTEGER NOT NULL DEFAULT 0, leaderboard INTEGER NOT NULL DEFAULT 0,
    open_question INTEGER, activity INTEGER NOT NULL DEFAULT 0, open_round INTEGER);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL, student TEXT NOT NULL, nickname TEXT NOT NULL, joined REAL NOT NULL,
    seen REAL NOT NULL, mode TEXT NOT NULL DEFAULT 'following', page TEXT NOT NULL DEFAULT '',
    removed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, code TEXT NOT NULL, step INTEGER NOT NULL, asked REAL NOT NULL,
    revealed REAL, model TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS guesses (
    question INTEGER NOT NULL, student TEXT NOT NULL, text TEXT NOT NULL, token INTEGER NOT NULL,
    tokens INTEGER NOT NULL, prob REAL NOT NULL, rank INTEGER NOT NULL, score REAL NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (question, student));
CREATE TABLE IF NOT EXISTS rounds (
    id INTEGER PRIMARY KEY AUTOINCREMENT, code TEXT NOT NULL, step INTEGER NOT NULL, tokens INTEGER NOT NULL,
    config TEXT NOT NULL, context TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS draws (
    round INTEGER NOT NULL, student TEXT NOT NULL, tokens TEXT NOT NULL, seed INTEGER NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (round, student));
CREATE TABLE IF NOT EXISTS attempts (source TEXT NOT NULL, kind TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_source ON attempts (source, kind, at);
"""


class ClassError(ValueError):
    """Something a class member asked for that cannot be done; the message is meant for the page."""


class NotTeacher(ClassError):
    """A teacher action without the teacher's key (a forged or replayed request)."""


class RateLimited(ClassError):
    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class ClassInfo:
    code: str
    created: float
    expires: float
    recipe: dict | None  # the teacher's session as a replay recipe (replay.recipe_to_dict), None before a prompt
    version: int  # goes up on every teacher change: a follower redraws when it moves
    names_on: bool
    leaderboard: bool
    open_question: int | None
    activity: int  # goes up on what students send: the teacher's page redraws when it moves
    open_round: int | None  # the sampling round students draw for, None when none is open


@dataclass(frozen=True)
class Student:
    student: str
    nickname: str
    mode: str
    page: str
    seen: float
    removed: bool


@dataclass(frozen=True)
class Guess:
    student: str
    text: str
    token: int  # the first token of the guess (a guess of several tokens is scored by it)
    tokens: int  # how many tokens the guess has
    prob: float  # the model's probability of ``token`` at the question's step
    rank: int
    score: float


@dataclass(frozen=True)
class Question:
    id: int
    step: int  # the teacher's step count when asked: the guess is about token step + 1
    asked: float
    revealed: float | None
    model: dict  # what the model said at reveal (its choice, top tokens), empty before


@dataclass(frozen=True)
class Round:
    """"Everyone sample": each student's tab draws ``tokens`` tokens after ``context`` under ``config``."""
    id: int
    step: int  # the teacher's step count when it started
    tokens: int
    config: dict  # replay.config_to_dict of the settings every draw uses
    context: tuple[int, ...]  # the teacher's whole text (prompt included) as token ids
    created: float


@dataclass(frozen=True)
class Draw:
    student: str
    tokens: tuple[int, ...]
    seed: int


def replica_tag(environ=os.environ) -> str:
    """This replica's one-character tag (``AUTOREG_REPLICA_TAG``, from ALPHABET), or '' on a single server.

    Every class code this replica makes starts with it, so a load balancer can send each member of a class
    to the replica that holds the class (``deploy/haproxy.cfg`` routes on the first character of ``class``).
    """
    tag = str(environ.get(ENV_REPLICA_TAG, "")).strip().upper()[:1]
    return tag if tag and tag in ALPHABET else ""


def new_code(tag: str = "") -> str:
    return tag + "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH - len(tag)))


def normal_code(text: str) -> str:
    """A typed or linked code as stored: upper case, spaces and dashes dropped, at most 16 characters."""
    return "".join(ch for ch in str(text or "").upper() if ch.isalnum())[:16]


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _source_hash(source: str) -> str:
    """What the rate limits keep of a source (an address or a tab): a hash, never the address itself."""
    return _hash("autoreg-source:" + str(source))[:24]


def clean_nickname(text: str) -> str:
    """At most ``NICKNAME_MAX`` printable characters, spaces collapsed; empty means anonymous."""
    kept = "".join(" " if ch.isspace() else ch for ch in str(text or "") if ch.isprintable() or ch.isspace())
    return " ".join(kept.split())[:NICKNAME_MAX]


def default_path() -> Path:
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env)
    from autoreg_core.loading import cache_dir

    return cache_dir() / "classes.sqlite3"


def class_hours(environ=os.environ) -> float:
    try:
        hours = float(environ.get(ENV_HOURS, DEFAULT_HOURS))
    except ValueError:
        return DEFAULT_HOURS
    return hours if hours > 0 else DEFAULT_HOURS


class ClassStore:
    """Every class of this server, in one SQLite file (WAL: readers never wait for the one writer)."""

    def __init__(self, path: Path | str, clock: Callable[[], float] = time.time, hours: float = DEFAULT_HOURS,
                 max_classes: int = MAX_CLASSES, max_students: int = MAX_STUDENTS):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock, self.hours = clock, hours
        self.max_classes, self.max_students = max_classes, max_students
        self._write = threading.Lock()  # one writer at a time in this process (SQLite would make us wait anyway)
        with self._db() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=10000")
            yield db
        finally:
            db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._write, self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------ classes
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
                       (code, _hash(key), now, now, now + self.hours * 3600))
        return code, key

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

    def is_teacher(self, code: str, key: str | None) -> bool:
        if not key:
            return False
        with self._db() as db:
            row = db.execute("SELECT teacher_hash FROM classes WHERE code = ?", (normal_code(code),)).fetchone()
        return row is not None and hmac.compare_digest(row[0], _hash(key))

    def claim_teacher(self, code: str, key: str, source: str = "") -> None:
        """A tab that presents a teacher key (in its address): accepted, or refused with a message.

        Wrong keys count against ``source`` and are slowed like wrong codes, so a key cannot be guessed.
        """
        code = normal_code(code)
        with self._tx() as db:
            self._limit(db, source, "key-fail", KEY_FAILS_PER_MINUTE, "wrong teacher keys")
            try:
                self._teacher(db, code, key)
                return
            except NotTeacher:
                db.execute("INSERT INTO attempts (source, kind, at) VALUES (?, 'key-fail', ?)",
                           (_source_hash(source), self.clock()))
        raise NotTeacher("This address carries a teacher key that is not this class's: it was refused, and this "
                         "tab can only join as a student.")

    @contextmanager
    def _as_teacher(self, code: str, key: str | None) -> Iterator[tuple[sqlite3.Connection, str]]:
        """A write transaction in which ``key`` was checked to be the class's teacher key: (db, the code as stored)."""
        code = normal_code(code)
        with self._tx() as db:
            self._teacher(db, code, key)
            yield db, code

    @staticmethod
    def _member(db: sqlite3.Connection, code: str, student: str) -> None:
        """Refuse a student who is not (or no longer) seated in the class."""
        me = db.execute("SELECT removed FROM students WHERE code = ? AND student = ?", (code, student)).fetchone()
        if me is None or me[0]:
            raise ClassError("You are not in this class (any more): join again with the class link.")

    def _teacher(self, db: sqlite3.Connection, code: str, key: str | None) -> None:
        row = db.execute("SELECT teacher_hash, expires FROM classes WHERE code = ?", (code,)).fetchone()
        if row is None or row[1] <= self.clock():
            raise ClassError("This class has ended or expired.")
        if not key or not hmac.compare_digest(row[0], _hash(key)):
            raise NotTeacher("Only the teacher of this class can do that; this tab does not hold the class's "
                             "teacher key.")

    def _bump(self, db: sqlite3.Connection, code: str) -> None:
        """A teacher change: every tab of the class redraws; the class stays open ``hours`` longer."""
        now = self.clock()
        db.execute("UPDATE classes SET version = version + 1, touched = ?, expires = ? WHERE code = ?",
                   (now, now + self.hours * 3600, code))

    @staticmethod
    def _stir(db: sqlite3.Connection, code: str) -> None:
        """A student's news (joined, guessed, drew, moved): only the teacher's page redraws."""
        db.execute("UPDATE classes SET activity = activity + 1 WHERE code = ?", (code,))

    def set_recipe(self, code: str, key: str, recipe: dict) -> int:
        """The teacher's session after an action, as a replay recipe; returns the new version."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE classes SET recipe = ? WHERE code = ?", (json.dumps(recipe), code))
            self._bump(db, code)
            return db.execute("SELECT version FROM classes WHERE code = ?", (code,)).fetchone()[0]

    def set_options(self, code: str, key: str, *, names_on: bool | None = None, leaderboard: bool | None = None) -> None:
        with self._as_teacher(code, key) as (db, code):
            if names_on is not None:
                db.execute("UPDATE classes SET names_on = ? WHERE code = ?", (int(names_on), code))
            if leaderboard is not None:
                db.execute("UPDATE classes SET leaderboard = ? WHERE code = ?", (int(leaderboard), code))
            self._bump(db, code)

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

    def codes(self) -> list[str]:
        """Open classes, oldest first (for the operator)."""
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT code FROM classes WHERE expires > ? ORDER BY created",
                                              (self.clock(),))]

    @staticmethod
    def _delete(db: sqlite3.Connection, code: str) -> None:
        db.execute("DELETE FROM guesses WHERE question IN (SELECT id FROM questions WHERE code = ?)", (code,))
        db.execute("DELETE FROM questions WHERE code = ?", (code,))
        db.execute("DELETE FROM draws WHERE round IN (SELECT id FROM rounds WHERE code = ?)", (code,))
        db.execute("DELETE FROM rounds WHERE code = ?", (code,))
        db.execute("DELETE FROM students WHERE code = ?", (code,))
        db.execute("DELETE FROM classes WHERE code = ?", (code,))

    def _expire(self, db: sqlite3.Connection, now: float) -> None:
        for (code,) in db.execute("SELECT code FROM classes WHERE expires <= ?", (now,)).fetchall():
            self._delete(db, code)
        db.execute("DELETE FROM attempts WHERE at < ?", (now - 3600,))

    # ------------------------------------------------------------ students
    def _limit(self, db: sqlite3.Connection, source: str, kind: str, per_minute: int, what: str) -> None:
        """Refuse when ``source`` made ``per_minute`` attempts of ``kind`` in the last minute."""
        now = self.clock()
        recent = db.execute("SELECT COUNT(*), MIN(at) FROM attempts WHERE source = ? AND kind = ? AND at > ?",
                            (_source_hash(source), kind, now - 60)).fetchone()
        if recent[0] >= per_minute:
            wait = max(1.0, 60 - (now - recent[1]))
            raise RateLimited(f"Too many {what} in a minute; wait {wait:.0f} s and try again.", wait)

    def join(self, code: str, nickname: str = "", source: str = "") -> str:
        """A student joins: their anonymous id. A wrong code counts against ``source`` (the tab or address)."""
        code, nickname = normal_code(code), clean_nickname(nickname)
        now = self.clock()
        with self._tx() as db:
            self._limit(db, source, "join-fail", JOIN_FAILS_PER_MINUTE, "wrong class codes")
            self._limit(db, EVERYONE, "join-fail", ALL_JOIN_FAILS_PER_MINUTE, "wrong class codes on this server")
            row = db.execute("SELECT expires FROM classes WHERE code = ?", (code,)).fetchone()
            wrong = row is None or row[0] <= now
            if wrong:  # counted (committed) before the refusal below
                db.executemany("INSERT INTO attempts (source, kind, at) VALUES (?, 'join-fail', ?)",
                               [(_source_hash(source), now), (_source_hash(EVERYONE), now)])
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

    def student(self, code: str, student: str) -> Student | None:
        with self._db() as db:
            row = db.execute("SELECT student, nickname, mode, page, seen, removed FROM students "
                             "WHERE code = ? AND student = ?", (normal_code(code), student)).fetchone()
        return None if row is None else Student(row[0], row[1], row[2], row[3], row[4], bool(row[5]))

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

    def students(self, code: str) -> list[Student]:
        with self._db() as db:
            rows = db.execute("SELECT student, nickname, mode, page, seen, removed FROM students WHERE code = ? "
                              "ORDER BY joined", (normal_code(code),)).fetchall()
        return [Student(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    def remove(self, code: str, key: str, student: str) -> None:
        """The teacher removes a student: their tab leaves the class and cannot rejoin with the same id."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE students SET removed = 1 WHERE code = ? AND student = ?", (code, student))
            self._bump(db, code)

    # ------------------------------------------------------------ questions and guesses
    def ask(self, code: str, key: str, step: int) -> int:
        """The teacher asks the class for the next token after ``step`` tokens; the new question's id."""
        with self._as_teacher(code, key) as (db, code):
            asked = db.execute("SELECT COUNT(*) FROM questions WHERE code = ?", (code,)).fetchone()[0]
            if asked >= MAX_QUESTIONS:
                raise ClassError(f"This class has asked {asked} questions, its limit: start a new class.")
            cur = db.execute("INSERT INTO questions (code, step, asked) VALUES (?, ?, ?)", (code, int(step), self.clock()))
            db.execute("UPDATE classes SET open_question = ? WHERE code = ?", (cur.lastrowid, code))
            self._bump(db, code)
            return cur.lastrowid

    def question(self, code: str, qid: int | None) -> Question | None:
        if qid is None:
            return None
        with self._db() as db:
            row = db.execute("SELECT id, step, asked, revealed, model FROM questions WHERE code = ? AND id = ?",
                             (normal_code(code), int(qid))).fetchone()
        return None if row is None else Question(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else {})

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
            self._limit(db, student, "guess", GUESSES_PER_MINUTE, "guesses")
            db.execute("INSERT INTO attempts (source, kind, at) VALUES (?, 'guess', ?)", (_source_hash(student), now))
            db.execute("INSERT OR REPLACE INTO guesses (question, student, text, token, tokens, prob, rank, score, at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (int(qid), student, str(text)[:GUESS_MAX], int(token), int(tokens), float(prob), int(rank),
                        float(score), now))
            self._stir(db, code)

    def guesses(self, code: str, qid: int) -> list[Guess]:
        with self._db() as db:
            rows = db.execute("SELECT g.student, g.text, g.token, g.tokens, g.prob, g.rank, g.score FROM guesses g "
                              "JOIN questions q ON q.id = g.question WHERE q.code = ? AND g.question = ? ORDER BY g.at, g.rowid",
                              (normal_code(code), int(qid))).fetchall()
        return [Guess(*r) for r in rows]

    def reveal(self, code: str, key: str, qid: int, model: dict) -> None:
        """Close the question with what the model said (its choice and top tokens)."""
        with self._as_teacher(code, key) as (db, code):
            q = db.execute("SELECT revealed FROM questions WHERE code = ? AND id = ?", (code, int(qid))).fetchone()
            if q is None:
                raise ClassError("This question does not exist in this class.")
            db.execute("UPDATE questions SET revealed = ?, model = ? WHERE id = ?", (self.clock(), json.dumps(model), int(qid)))
            db.execute("UPDATE classes SET open_question = ? WHERE code = ?", (int(qid), code))
            self._bump(db, code)

    def close_question(self, code: str, key: str) -> None:
        """The teacher moves on: no question is shown any more."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE classes SET open_question = NULL WHERE code = ?", (code,))
            self._bump(db, code)

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
    def start_round(self, code: str, key: str, step: int, tokens: int, config: dict, context: list[int]) -> int:
        """The teacher asks every student's tab to draw ``tokens`` tokens after ``context``; the round's id."""
        if not 1 <= int(tokens) <= MAX_DRAW_TOKENS:
            raise ClassError(f"A draw is 1 to {MAX_DRAW_TOKENS} tokens.")
        if not context or len(context) > MAX_CONTEXT:
            raise ClassError(f"The text to sample from must have 1 to {MAX_CONTEXT} tokens.")
        with self._as_teacher(code, key) as (db, code):
            held = db.execute("SELECT COUNT(*) FROM rounds WHERE code = ?", (code,)).fetchone()[0]
            if held >= MAX_ROUNDS:
                raise ClassError(f"This class has sampled {held} times, its limit: start a new class.")
            cur = db.execute("INSERT INTO rounds (code, step, tokens, config, context, created) VALUES (?, ?, ?, ?, ?, ?)",
                             (code, int(step), int(tokens), json.dumps(config), json.dumps([int(t) for t in context]),
                              self.clock()))
            db.execute("UPDATE classes SET open_round = ? WHERE code = ?", (cur.lastrowid, code))
            self._bump(db, code)
            return cur.lastrowid

    def close_round(self, code: str, key: str) -> None:
        """The teacher moves on: students stop drawing (the rounds and their trees are kept)."""
        with self._as_teacher(code, key) as (db, code):
            db.execute("UPDATE classes SET open_round = NULL WHERE code = ?", (code,))
            self._bump(db, code)

    def round(self, code: str, rid: int | None) -> Round | None:
        if rid is None:
            return None
        with self._db() as db:
            row = db.execute("SELECT id, step, tokens, config, context, created FROM rounds WHERE code = ? AND id = ?",
                             (normal_code(code), int(rid))).fetchone()
        return None if row is None else Round(row[0], row[1], row[2], json.loads(row[3]), tuple(json.loads(row[4])),
                                              row[5])

    def rounds(self, code: str) -> list[Round]:
        """Every sampling round of the class, oldest first."""
        with self._db() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM rounds WHERE code = ? ORDER BY id", (normal_code(code),))]
        return [self.round(code, rid) for rid in ids]

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

    def draws(self, code: str, rid: int) -> list[Draw]:
        with self._db() as db:
            rows = db.execute("SELECT d.student, d.tokens, d.seed FROM draws d JOIN rounds r ON r.id = d.round "
                              "WHERE r.code = ? AND d.round = ? ORDER BY d.at, d.rowid",
                              (normal_code(code), int(rid))).fetchall()
        return [Draw(r[0], tuple(json.loads(r[1])), r[2]) for r in rows]


def main(argv: list[str] | None = None) -> int:
    """The operator's view of this server's classes: list them, or delete one."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autoreg_ui.classroom.store", description=main.__doc__)
    parser.add_argument("action", choices=("list", "delete"))
    parser.add_argument("code", nargs="?", help="the class to delete")
    parser.add_argument("--db", help=f"the class file (default: ${ENV_DB}, else the app's cache dir)")
    args = parser.parse_args(argv)
    store = ClassStore(args.db or default_path(), hours=class_hours())
    if args.action == "list":
        for code in store.codes():
            info = store.info(code)
            seated = sum(not s.removed for s in store.students(code))
            print(f"{code}  {seated} students  expires {time.strftime('%Y-%m-%d %H:%M', time.localtime(info.expires))}")
        return 0
    if not args.code:
        parser.error("delete needs the class code")
    found = store.delete(args.code)
    print(f"{normal_code(args.code)}: {'deleted' if found else 'no such class'}")
    return 0 if found else 1


if __name__ == "__main__":
    raise SystemExit(main())
