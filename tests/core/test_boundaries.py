"""The engine stays an engine: no presentation library is imported and no HTML is written in it."""
import re
import subprocess
import sys

from conftest import ROOT

ENGINE = ROOT / "autoreg_core"
FORBIDDEN = ("plotly", "pandas", "streamlit")


def test_importing_every_engine_module_loads_no_presentation_library():
    modules = sorted(".".join(p.relative_to(ENGINE).with_suffix("").parts) for p in ENGINE.rglob("*.py")
                     if p.stem != "__init__")
    assert "engine.decode" in modules and "engine.session" in modules and "experiments.sampling_lab" in modules
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module('autoreg_core.' + m)\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_engine_file_mentions_a_presentation_library_or_html():
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*(import|from)\s+(plotly|pandas|streamlit)\b", text, re.M):
            offenders.append(f"{path.relative_to(ENGINE)}: imports a presentation library")
        if re.search(r"<(span|div|style|b|br|table)\b", text):
            offenders.append(f"{path.relative_to(ENGINE)}: holds HTML")
    assert offenders == []


def test_the_engine_has_its_three_wings_and_no_package_for_figures():
    assert sorted(p.name for p in ENGINE.iterdir() if p.is_dir() and p.name != "__pycache__") == [
        "engine", "experiments", "runtime"]


def test_no_engine_function_runs_past_sixty_lines():
    import ast

    long = []
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60:
                long.append(f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert long == []
