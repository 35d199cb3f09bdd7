"""autoreg_core stays an engine: no presentation library is imported and no HTML is written in it, and its
stepping machine (``engine/``) imports neither of the other wings."""
import re
import subprocess
import sys

from conftest import ROOT

ENGINE = ROOT / "autoreg_core"
FORBIDDEN = ("plotly", "pandas", "streamlit")


def _modules(folder) -> list[str]:
    """Dotted names of every module under ``folder`` (a folder of autoreg_core)."""
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in folder.rglob("*.py")
                  if p.stem != "__init__")


def _loaded_after_importing(modules: list[str]) -> list[str]:
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print('\\n'.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_every_engine_module_loads_no_presentation_library():
    modules = _modules(ENGINE)
    assert "autoreg_core.engine.decode" in modules and "autoreg_core.runtime.batcher" in modules
    loaded = _loaded_after_importing(modules)
    assert [m for m in loaded if m.split(".")[0] in FORBIDDEN] == []


def test_the_stepping_engine_loads_neither_the_runtime_nor_the_experiments():
    """A notebook stepping a ``Session`` runs on nothing of the server's: the engine imports no other wing
    (the server hands a session its runtime instead)."""
    modules = _modules(ENGINE / "engine")
    assert "autoreg_core.engine.session" in modules and "autoreg_core.engine.replay" in modules
    loaded = _loaded_after_importing(modules)
    assert [m for m in loaded if m.startswith(("autoreg_core.runtime", "autoreg_core.experiments"))] == []


def test_no_engine_file_mentions_a_presentation_library_or_html():
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*(import|from)\s+(plotly|pandas|streamlit)\b", text, re.M):
            offenders.append(f"{path.relative_to(ENGINE)}: imports a presentation library")
        if re.search(r"<(span|div|style|b|br|table)\b", text):
            offenders.append(f"{path.relative_to(ENGINE)}: holds HTML")
    assert offenders == []


def test_the_engine_has_its_three_wings_and_no_subpackage_for_figures():
    assert not (ENGINE / "figures").exists()
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
