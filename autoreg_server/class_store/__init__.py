"""A class kept in SQLite (or PostgreSQL: ``AUTOREG_CLASS_DB=postgresql://…``): its join code, the teacher's key
(hashed), students, the teacher's steps, questions and guesses. Pure Python (stdlib ``sqlite3``), no Streamlit:
tests drive it with a temporary file and a fake clock.

Why a database: a class must outlive the server process. A server restarted in the middle of a lesson reopens
the same store, and every tab that comes back (teacher or student) finds its class, its place and every guess.
One server keeps one SQLite file (``AUTOREG_CLASS_DB``, default under the app's cache dir). Several replicas
either keep a file each, the class code's first character (``AUTOREG_REPLICA_TAG``) routing every member to the
replica that holds the class, or share one PostgreSQL database (``AUTOREG_CLASS_DB=postgresql://…``).

Who may do what: only a caller holding the teacher key changes a class (step, ask, reveal, sample, end,
remove a student, settings). The key is shown once, to the teacher's tab, and stored here only as a SHA-256
hash; a student's tab never sees it. A wrong key is refused with ``NotTeacher``. Wrong class codes, wrong
teacher keys and guesses are rate-limited per source (``RateLimited`` says how long to wait); a source is
kept only as a hash, for an hour, so nothing here identifies a student beyond the nickname they chose.

Two counters tell tabs when to redraw: ``version`` moves on every teacher change (followers redraw), and
``activity`` on what students send (joins, guesses, draws, which page they are on): only the teacher's
page watches it, so thirty guesses do not redraw thirty followers thirty times.

Operators: ``python -m autoreg_server.class_store list`` and ``python -m autoreg_server.class_store delete CODE``.

The package, one idea a module: ``dialect`` (the one schema, and what a back end supplies), ``sqlite`` (all that is
SQLite's own: column types, connection, write transaction, upsert), ``postgres`` (PostgreSQL's own: a pool, ``%s``
parameters, an advisory-lock write transaction, the upsert, ``LISTEN/NOTIFY``), ``core`` (file, clock, caps, the
ways in), ``records`` (errors and rows), ``codes`` (class codes, replica tag, nicknames), ``rates`` (rate limits,
source hashes), ``teacher`` (the teacher's and operator's transactions), ``seats`` (a student's writes), ``reads``
(every read), ``class_store`` (``ClassStore``, the three composed), ``cli`` (the operator's command line). This
module re-exports their public names."""
from autoreg_server.class_store.class_store import ClassStore
from autoreg_server.class_store.cli import main
from autoreg_server.class_store.codes import (
    ALPHABET,
    CODE_LENGTH,
    ENV_REPLICA_TAG,
    NICKNAME_MAX,
    clean_nickname,
    new_code,
    normal_code,
    replica_tag,
)
from autoreg_server.class_store.core import (
    DEFAULT_HOURS,
    ENV_DB,
    ENV_HOURS,
    ENV_SEATS,
    MAX_CLASSES,
    MAX_STUDENTS,
    StoreCore,
    class_hours,
    class_seats,
    default_path,
)
from autoreg_server.class_store.rates import (
    ALL_JOIN_FAILS_PER_MINUTE,
    EVERYONE,
    GUESSES_PER_MINUTE,
    JOIN_FAILS_PER_MINUTE,
    KEY_FAILS_PER_MINUTE,
    source_hash,
)
from autoreg_server.class_store.reads import ClassReads
from autoreg_server.class_store.records import (
    ClassError,
    ClassInfo,
    Draw,
    Guess,
    NotTeacher,
    Question,
    RateLimited,
    Round,
    Student,
)
from autoreg_server.class_store.seats import GUESS_MAX, MODES, SeatActions
from autoreg_server.class_store.sqlite import SCHEMA
from autoreg_server.class_store.teacher import (
    MAX_CONTEXT,
    MAX_DRAW_TOKENS,
    MAX_QUESTIONS,
    MAX_ROUNDS,
    TeacherActions,
    key_hash,
)

__all__ = [
    "ALL_JOIN_FAILS_PER_MINUTE", "ALPHABET", "CODE_LENGTH", "DEFAULT_HOURS", "ENV_DB", "ENV_HOURS",
    "ENV_REPLICA_TAG", "ENV_SEATS", "EVERYONE", "GUESSES_PER_MINUTE", "GUESS_MAX", "JOIN_FAILS_PER_MINUTE",
    "KEY_FAILS_PER_MINUTE", "MAX_CLASSES", "MAX_CONTEXT", "MAX_DRAW_TOKENS", "MAX_QUESTIONS", "MAX_ROUNDS",
    "MAX_STUDENTS", "MODES", "NICKNAME_MAX", "SCHEMA", "ClassError", "ClassInfo", "ClassReads", "ClassStore",
    "Draw", "Guess", "NotTeacher", "Question", "RateLimited", "Round", "SeatActions", "StoreCore", "Student",
    "TeacherActions", "class_hours", "class_seats", "clean_nickname", "default_path", "key_hash", "main",
    "new_code", "normal_code", "replica_tag", "source_hash",
]
