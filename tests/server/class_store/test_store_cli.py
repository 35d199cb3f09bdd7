"""The operator's command line, called in process and as ``python -m autoreg_server.class_store``."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autoreg_server.class_store import ClassStore
from autoreg_server.class_store.cli import main

ROOT = Path(__file__).resolve().parents[3]


def test_list_shows_each_open_class_with_its_seated_students(class_db, capsys):
    db = class_db
    store = ClassStore(db)
    code, key = store.create()
    store.join(code)
    store.remove(code, key, store.join(code))
    assert main(["list", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{code}  1 students  expires ")


def test_delete_needs_a_code(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["delete", "--db", str(tmp_path / "ops.sqlite3")])
    assert exited.value.code == 2 and "needs the class code" in capsys.readouterr().err


def test_python_dash_m_lists_and_deletes_the_class_file_named_in_the_environment(class_db):
    db = class_db
    code, _ = ClassStore(db).create()
    env = {**os.environ, "AUTOREG_CLASS_DB": str(db), "PYTHONPATH": str(ROOT)}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "autoreg_server.class_store", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)

    listed = run("list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"{code}  0 students  expires ")
    deleted = run("delete", code.lower())
    assert deleted.returncode == 0 and deleted.stdout.strip() == f"{code}: deleted"
    assert run("list").stdout == ""
