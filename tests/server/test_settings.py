"""The operator's settings: read and checked once, the only reader of ``AUTOREG_*`` variables, and the source
of the operators' table."""
import ast
import dataclasses
import threading
from pathlib import Path

import pytest

from autoreg_server import settings
from autoreg_server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
APP_SOURCES = ("autoreg_core", "autoreg_server", "autoreg_ui", "pages", "app.py")
READER = "autoreg_server/settings.py"


def test_every_variable_is_one_field_with_its_default_and_what_it_does():
    fields = dataclasses.fields(Settings)
    variables = [f.metadata["variable"] for f in fields]
    assert len(fields) == 24 and len(set(variables)) == 24
    assert all(v.startswith(settings.PREFIX) and f.metadata["what"] and f.metadata["accepts"]
               for v, f in zip(variables, fields))
    assert Settings.from_environ({}) == Settings()
    assert settings.variable("max_sessions") == "AUTOREG_MAX_SESSIONS"


def test_values_are_read_and_typed():
    got = Settings.from_environ({
        "AUTOREG_ALLOWED_MODELS": "org/a, /some/folder,", "AUTOREG_BATCH": "off", "AUTOREG_FORWARD_SLOTS": "3",
        "AUTOREG_PREFIX_CACHE_MB": "1.5", "AUTOREG_CLASS_SEATS": "150", "AUTOREG_REPLICA_TAG": " b ",
        "AUTOREG_TRUSTED_PROXIES": " 10.0.0.5 ,127.0.0.1,", "AUTOREG_WARM": "0", "AUTOREG_DEVICE": "cpu",
    })
    assert got.allowed_models == ("org/a", "/some/folder") and got.batch is False and got.forward_slots == 3
    assert got.prefix_cache_bytes == int(1.5 * 2**20) and got.class_seats == 150 and got.replica_tag == "B"
    assert got.trusted_proxies == ("10.0.0.5", "127.0.0.1") and got.warm is False and got.device == "cpu"
    assert Settings.from_environ({"AUTOREG_REPLICA_TAG": "xyz"}).replica_tag == "X"


def test_a_bad_tuning_value_keeps_the_default():
    bad = {"AUTOREG_TORCH_THREADS": "all", "AUTOREG_FORWARD_SLOTS": "-1", "AUTOREG_BATCH_WORKERS": "x",
           "AUTOREG_SWITCH_INTERVAL_MS": "x", "AUTOREG_MAX_SESSIONS": "many", "AUTOREG_IDLE_MINUTES": "-3",
           "AUTOREG_MAX_NEW_TOKENS": "0", "AUTOREG_MAX_RACE_LENGTH": "", "AUTOREG_CLASS_HOURS": "-2",
           "AUTOREG_CLASS_SEATS": "1001", "AUTOREG_REPLICA_TAG": "I"}
    assert Settings.from_environ(bad) == Settings()


@pytest.mark.parametrize("variable, value, says", [
    ("AUTOREG_PREFIX_CACHE_MB", "lots", "AUTOREG_PREFIX_CACHE_MB must be a number of MiB; got 'lots'."),
    ("AUTOREG_PREFIX_CACHE_MB", "-1", "AUTOREG_PREFIX_CACHE_MB must be ≥ 0; got '-1'."),
    ("AUTOREG_MAX_MODELS", "two", "AUTOREG_MAX_MODELS must be a whole number; got 'two'."),
    ("AUTOREG_CLASS_DB_POOL", "8.5", "AUTOREG_CLASS_DB_POOL must be a whole number; got '8.5'."),
    ("AUTOREG_MALLOC_TRIM_S", "soon", "AUTOREG_MALLOC_TRIM_S must be a number of seconds; got 'soon'."),
])
def test_a_value_the_server_cannot_run_with_stops_it_with_one_clear_error(variable, value, says):
    with pytest.raises(ValueError) as raised:
        Settings.from_environ({variable: value})
    assert str(raised.value) == says


def test_every_bad_strict_value_is_named_in_the_one_error():
    with pytest.raises(ValueError, match="AUTOREG_MAX_MODELS .* AUTOREG_PREFIX_CACHE_MB"):
        Settings.from_environ({"AUTOREG_PREFIX_CACHE_MB": "lots", "AUTOREG_MAX_MODELS": "x"})


def test_current_is_read_once_per_process_until_reset(monkeypatch):
    monkeypatch.setenv("AUTOREG_MAX_NEW_TOKENS", "64")
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(settings.current())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(s) for s in seen}) == 1 and seen[0].max_new_tokens == 64
    import os

    os.environ["AUTOREG_MAX_NEW_TOKENS"] = "8"  # behind monkeypatch's back: not read again ...
    try:
        assert settings.current() is seen[0]
        settings.reset_for_tests()  # ... until the instance is forgotten
        assert settings.current().max_new_tokens == 8
    finally:
        monkeypatch.setenv("AUTOREG_MAX_NEW_TOKENS", "64")  # monkeypatch restores the variable at the end


# ---------------------------------------------------------------- the operators' table
def test_the_operators_table_is_what_the_fields_generate():
    assert (ROOT / "docs" / "settings.md").read_text(encoding="utf-8") == settings.markdown(), (
        "regenerate it: python -m autoreg_server.settings --markdown > docs/settings.md")


def test_the_table_has_a_row_per_setting(capsys):
    settings.main(["--markdown"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `AUTOREG_")]
    assert [row.split("`")[1] for row in rows] == [f.metadata["variable"] for f in dataclasses.fields(Settings)]


# ---------------------------------------------------------------- nobody else reads the environment
def _environ_reads(source: str) -> list[str]:
    """The ``AUTOREG_*`` variables a module reads from the environment: ``os.environ.get/[]/pop/setdefault``,
    ``os.getenv``, or any ``environ`` mapping passed in, named by a string or by a module constant."""
    tree = ast.parse(source)
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}

    def named(node) -> str | None:
        value = node.value if isinstance(node, ast.Constant) else constants.get(getattr(node, "id", None))
        return value if isinstance(value, str) and value.startswith(settings.PREFIX) else None

    def is_environ(node) -> bool:
        return (isinstance(node, ast.Name) and node.id == "environ") or (
            isinstance(node, ast.Attribute) and node.attr == "environ")

    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault")
                    and is_environ(func.value)) or getattr(func, "attr", getattr(func, "id", None)) == "getenv":
                key = node.args[0]
        elif isinstance(node, ast.Subscript) and is_environ(node.value):
            key = node.slice
        if key is not None and named(key):
            found.append(named(key))
    return found


def _app_modules():
    for name in APP_SOURCES:
        path = ROOT / name
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def test_no_module_but_the_settings_reads_an_autoreg_variable():
    readers = {str(path.relative_to(ROOT)): _environ_reads(path.read_text(encoding="utf-8"))
               for path in _app_modules()}
    readers.pop(READER)  # the one reader (by each field's variable name)
    assert len(readers) > 100, "the scan found the app's modules"
    assert {path: found for path, found in readers.items() if found} == {}


def test_the_reader_rule_catches_each_way_of_reading():
    breach = '''import os
from os import environ, getenv
ENV = "AUTOREG_SEATS"

def seats(environ=os.environ):
    return int(environ.get(ENV, "3"))

LIMIT = os.environ["AUTOREG_LIMIT"]
WARM = getenv("AUTOREG_WARM", "1")
OTHER = os.environ.get("HOME")  # not ours
'''
    assert sorted(_environ_reads(breach)) == ["AUTOREG_LIMIT", "AUTOREG_SEATS", "AUTOREG_WARM"]
