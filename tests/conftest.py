import os
import secrets
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
# Every AppTest is a new tab with its own session id, and no Streamlit runtime can say when it closed:
# with the server's default of 30 seats the 31st AppTest of a run would get the class-is-full page.
# Tests run without a seat cap (servers they start inherit this); test_limits installs its own seats.
os.environ.setdefault("AUTOREG_MAX_SESSIONS", "0")

from tiny import tiny_bundle  # noqa: E402

from autoreg_server import settings  # noqa: E402


def _reading_settings_again(change):
    """``monkeypatch.setenv``/``delenv`` of an ``AUTOREG_*`` variable: the next ``settings.current()`` reads it."""
    def changed(self, name, *args, **kwargs):
        result = change(self, name, *args, **kwargs)
        if str(name).startswith(settings.PREFIX):
            settings.reset_for_tests()
        return result

    return changed


pytest.MonkeyPatch.setenv = _reading_settings_again(pytest.MonkeyPatch.setenv)
pytest.MonkeyPatch.delenv = _reading_settings_again(pytest.MonkeyPatch.delenv)


@pytest.fixture(autouse=True)
def settings_of_this_test():
    """Each test reads the operator's settings from its own environment (a test before may have changed it)."""
    settings.reset_for_tests()
    yield
    settings.reset_for_tests()


@pytest.fixture(scope="session")
def tiny():
    """A tiny random Llama bundle (fast)."""
    return tiny_bundle()


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory):
    """The tiny model saved to a folder, so the app can load it as an allowlisted model."""
    folder = tmp_path_factory.mktemp("tiny_model")
    bundle = tiny_bundle()
    bundle.model.save_pretrained(folder)
    bundle.tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture
def open_page(tiny_folder, monkeypatch):
    """``open_page("pages/cost.py")``: the app under AppTest on the tiny model, switched to that page."""
    from streamlit.testing.v1 import AppTest

    from autoreg_ui import keys

    def _open(page: str, timeout: float = 120):
        monkeypatch.setenv("AUTOREG_ALLOWED_MODELS", tiny_folder)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
        at.session_state[keys.MODEL] = tiny_folder
        at.run()
        at.switch_page(page)
        at.run()
        assert not at.exception, at.exception
        return at

    return _open


@pytest.fixture(scope="module")
def one_thread():
    """Two cores shared by many: one torch thread avoids thrashing (measured 100× faster under load)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def in_own_thread(function, *args, **kwargs):
    """Run ``function`` in a new thread and return its result.

    The browser tests keep a sync Playwright (and so a running asyncio loop) open in the main thread
    for the whole session; ``asyncio.run`` and a second sync Playwright refuse to start under it.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args, **kwargs).result()


@pytest.fixture(scope="session")
def embedded():
    """The embedded SmolLM2-135M-Instruct, converted once into the cache dir."""
    from autoreg_core import load_model

    return load_model()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "embedded" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


def _keep_streamlit_on_navigation() -> None:
    """Work around an AppTest quirk: it resets ``PagesManager.uses_pages_directory`` before every run,
    and because our page files live in ``pages/`` it then re-detects the legacy (v1) multipage
    mode and runs the page file alone on reruns, skipping ``app.py`` and its sidebar. A real server
    sets the flag to False as soon as ``st.navigation`` runs; we pin it the same way."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


_keep_streamlit_on_navigation()


@pytest.fixture(scope="session")
def postgres_dsn():
    """A throwaway PostgreSQL 15 server for the whole test run (``bench.lib.postgres``), stopped at the end."""
    from bench.lib import postgres

    if postgres.server_bin() is None:
        pytest.skip("PostgreSQL's server is not installed (make test installs Debian's postgresql where it can)")
    cluster = postgres.start_cluster()
    yield cluster.dsn
    cluster.stop()


@pytest.fixture
def class_app(tmp_path, monkeypatch, tiny_folder):
    """The app's class mode on a fresh class file of its own, the tiny model allowed, nothing live from a test
    before: the page tests of class mode (teacher, students, followers) start here."""
    from autoreg_server import live_classes

    monkeypatch.setenv("AUTOREG_CLASS_DB", str(tmp_path / "classes.sqlite3"))
    monkeypatch.setenv("AUTOREG_ALLOWED_MODELS", tiny_folder)
    live_classes.reset_for_tests()
    yield tmp_path / "classes.sqlite3"
    live_classes.reset_for_tests()


# ---------------------------------------------------------------- the class store on both back ends
# ``class_db`` is a new SQLite file, or a new database on the session's throwaway PostgreSQL server
# (``postgres_dsn``), one per test, dropped after it: the store's own tests and the class pages' tests use it.
TABLES = ("classes", "students", "questions", "guesses", "rounds", "draws", "attempts")


@pytest.fixture(params=["sqlite", "postgres"])
def class_db(request, tmp_path):
    """Where a test's class store lives: a path (SQLite) or a ``postgresql://`` URL of its own database."""
    if request.param == "sqlite":
        yield tmp_path / "classes.sqlite3"
        return
    import psycopg

    from autoreg_server.class_store import postgres

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
    from autoreg_server.class_store import ClassStore

    return ClassStore(class_db, clock=clock, hours=2)
