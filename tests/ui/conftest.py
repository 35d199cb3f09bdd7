"""The class store's tests run on both back ends: ``class_db`` is a new SQLite file, or a new database on the
session's throwaway PostgreSQL server (``postgres_dsn``), one per test, dropped after it."""
import secrets

import pytest

TABLES = ("classes", "students", "questions", "guesses", "rounds", "draws", "attempts")


@pytest.fixture(params=["sqlite", "postgres"])
def class_db(request, tmp_path):
    """Where a test's class store lives: a path (SQLite) or a ``postgresql://`` URL of its own database."""
    if request.param == "sqlite":
        yield tmp_path / "classes.sqlite3"
        return
    import psycopg

    from autoreg_ui.classroom.store import postgres

    dsn = request.getfixturevalue("postgres_dsn")
    name = "class_" + secrets.token_hex(6)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    url = dsn.rsplit("/", 1)[0] + "/" + name
    yield url
    postgres.close(url)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture
def stored_bytes(tmp_path):
    """``stored_bytes(store)``: every byte the store keeps (the files in ``tmp_path``, or every row as text)."""
    def read(store) -> bytes:
        if store.backend.name == "sqlite":
            return b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
        with store._db() as db:
            rows = [db.execute(f"SELECT t::text FROM {table} t").fetchall() for table in TABLES]
        return repr(rows).encode()

    return read


class Clock:
    """A clock the test moves by hand (``clock.now += 61``)."""

    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(class_db, clock):
    """A class store on ``class_db`` with the fake clock, classes lasting two hours."""
    from autoreg_ui.classroom.store import ClassStore

    return ClassStore(class_db, clock=clock, hours=2)
