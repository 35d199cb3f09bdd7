"""The project installs with pip: pyproject.toml names the same pins as requirements.txt and a console script
``autoreg`` that starts the server as ``make run`` does."""
import re
import tomllib
from pathlib import Path

from autoreg_ui import serve

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
