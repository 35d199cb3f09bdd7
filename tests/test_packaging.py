"""The project installs with pip: pyproject.toml names the same pins as requirements.txt and a console script
``autoreg`` that starts the server as ``make run`` does, and a built wheel carries the app's own files (``app.py``,
every page, the assets and the Streamlit config) where the installed ``autoreg`` finds them."""
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from autoreg_ui import app_files, serve

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;]+)", line).groups()
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_the_dependencies_are_the_pins_of_requirements_txt():
    required = _pins((ROOT / "requirements.txt").read_text().splitlines())
    assert "torch" in required and len(required) >= 10
    assert _pins(PROJECT["project"]["dependencies"]) == required


def test_python_311_and_the_console_script_runs_the_server_entry():
    assert PROJECT["project"]["requires-python"] == ">=3.11"
    assert PROJECT["project"]["scripts"] == {"autoreg": "autoreg_ui.serve:main"}
    assert callable(serve.main) and Path(serve.APP) == ROOT / "app.py"


def test_make_run_starts_the_same_entry_and_make_test_runs_ruff_first():
    makefile = (ROOT / "Makefile").read_text()
    assert "-m autoreg_ui.serve" in makefile
    test_rule = re.search(r"^test: (.*)$", makefile, re.M).group(1).split()
    assert test_rule.index("lint") < test_rule.index("chromium")
    assert re.search(r"^lint: .*\n\t.*ruff check", makefile, re.M)
    assert "ruff==" in (ROOT / "requirements-dev.txt").read_text()


def test_the_app_folder_is_the_checkouts_top_unless_a_wheel_put_the_app_beside_the_packages(tmp_path, monkeypatch):
    assert app_files.app_folder() == ROOT and (ROOT / "app.py").is_file()
    packaged = tmp_path / "autoreg_app"
    monkeypatch.setattr(app_files, "PACKAGED", packaged)
    assert app_files.app_folder() == ROOT  # no installed copy: the checkout's
    packaged.mkdir()
    (packaged / "app.py").write_text("")
    assert app_files.app_folder() == packaged


SOURCES_LEFT_OUT = shutil.ignore_patterns(".git", ".venv", "node_modules", "test-artifacts", "__pycache__", "build",
                                          "dist", "*.egg-info", "tests", "bench", "model-cache", ".pytest_cache")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the checkout (the build writes its build/ folder there, not here)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=SOURCES_LEFT_OUT)
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "-w", str(tmp / "dist"), "--no-deps",
                    "--no-build-isolation", "--quiet", "--disable-pip-version-check"],
                   check=True, capture_output=True, timeout=300)
    [built] = (tmp / "dist").glob("autoreg-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_files(wheel) -> set[str]:
    with zipfile.ZipFile(wheel) as built:
        return set(built.namelist())


def test_the_wheel_carries_the_app_every_page_the_assets_and_the_streamlit_config(wheel_files):
    packaged = Path(app_files.PACKAGED.name)
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))
    assert len(pages) >= 10
    wanted = ["app.py", *pages, ".streamlit/config.toml", "assets/long_prompt.txt"]
    assert [f for f in wanted if (packaged / f).as_posix() not in wheel_files] == []
    assert "autoreg_ui/serve.py" in wheel_files and "autoreg_core/__init__.py" in wheel_files
    assert not [f for f in wheel_files if f.startswith(("tests/", "bench/", "deploy/"))]


def test_the_wheel_names_the_autoreg_command(wheel, wheel_files):
    [entry_points] = [f for f in wheel_files if f.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as built:
        scripts = built.read(entry_points).decode()
    assert re.search(r"^\[console_scripts\]\nautoreg = autoreg_ui\.serve:main$", scripts, re.M)
