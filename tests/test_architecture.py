"""The shape of the whole tree, read from the code's imports with ``ast`` (module level and inside functions alike;
``if TYPE_CHECKING:`` blocks are skipped), so nothing is imported to check them. Each rule is also run once on a
made-up case that breaks it, so a rule that silently stopped looking would fail.

- ``autoreg_core`` has three wings: ``engine`` (one session's stepping) imports neither other wing, ``runtime`` (many
  tabs on one model) imports only the engine, and no part of ``autoreg_core`` imports the UI, the server package or
  a presentation library: a notebook gets the engine alone.
- ``autoreg_server`` (settings, the class store, server-wide state) is pure Python: no Streamlit, no UI.
- One lesson is one package that imports no other lesson; shared UI modules import no lesson.
- No UI or server module runs past 400 lines; no modules anywhere import each other in a circle.
- ``bench/`` and ``deploy/`` never import ``tests`` nor spell a path into it.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

UI = ROOT / "autoreg_ui"
LESSONS = UI / "lessons"
CORE = ROOT / "autoreg_core"
SERVER = ROOT / "autoreg_server"
PACKAGES = ("autoreg_core", "autoreg_ui", "autoreg_server", "bench", "deploy", "pages")
MAX_LINES = 400
TOO_LONG_ALLOWED: set[str] = set()
SHARED_IMPORTS_ALLOWED: set[str] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"


def imported_names(source: str, module: str, is_package: bool = False,
                   modules: frozenset[str] = frozenset()) -> set[str]:
    """Every dotted name ``source`` imports: ``import a.b`` gives a.b; ``from a.b import c`` gives a.b and a.b.c
    (c may be a module or just a name in a.b); relative imports are resolved against ``module``. Where every c is
    one of ``modules`` (``from package import submodule``), a.b itself is left out: only the submodules count."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for orelse in child.orelse:
                    visit(orelse)
                continue
            if isinstance(child, ast.Import):
                names.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    package = module.split(".") if is_package else module.split(".")[:-1]
                    base = package[:len(package) - (child.level - 1)]
                    origin = ".".join(base + ([child.module] if child.module else []))
                else:
                    origin = child.module
                named = {f"{origin}.{alias.name}" for alias in child.names}
                if not named <= modules:
                    names.add(origin)
                names.update(named)
            visit(child)

    visit(ast.parse(source))
    return names


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _ui_files() -> list[Path]:
    return _files_under(UI)


def _tree_files() -> list[Path]:
    """Every source file of the product, the bench and the deploy check (tests are not part of the house)."""
    found = [ROOT / "app.py"]
    for package in PACKAGES:
        if (ROOT / package).is_dir():
            found += _files_under(ROOT / package)
    return found


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imports(path: Path) -> set[str]:
    modules = frozenset(_module_name(p) for p in _tree_files())
    return imported_names(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py", modules)


# ---------------------------------------------------------------- (a) a lesson imports no other lesson
def lessons_imported(names: set[str]) -> set[str]:
    """The lessons a set of imported dotted names reaches (autoreg_ui.lessons.<lesson>...)."""
    return {name.split(".")[2] for name in names if name.startswith("autoreg_ui.lessons.")}


def cross_lesson_imports(files: dict[str, set[str]]) -> list[str]:
    """``files``: lesson file (autoreg_ui/lessons/<lesson>/...) → its imported names; the imports of another lesson."""
    found = []
    for rel, names in sorted(files.items()):
        own = rel.split("/")[2]
        found += [f"{rel} imports the {other} lesson" for other in sorted(lessons_imported(names) - {own})]
    return found


def test_no_lesson_imports_another_lesson():
    files = {_rel(p): _imports(p) for p in _ui_files() if p.is_relative_to(LESSONS) and p.parent != LESSONS}
    assert {rel.split("/")[2] for rel in files} >= {"start", "step", "tokens", "attention", "sampling", "cost",
                                                    "inside", "serving"}
    assert cross_lesson_imports(files) == []


def test_the_lesson_rule_catches_a_lesson_that_imports_another():
    source = ("from autoreg_ui.lessons.cost.controller import attention_share\n"
              "from autoreg_ui.lessons.step import text\n")
    names = imported_names(source, "autoreg_ui.lessons.step.questions")
    assert cross_lesson_imports({"autoreg_ui/lessons/step/questions.py": names}) == [
        "autoreg_ui/lessons/step/questions.py imports the cost lesson"]
    relative = imported_names("from ..cost import text\n", "autoreg_ui.lessons.step.questions")
    assert cross_lesson_imports({"autoreg_ui/lessons/step/questions.py": relative}) != []
    lazy = imported_names("def f():\n    import autoreg_ui.lessons.inside.text\n", "autoreg_ui.lessons.step.figures")
    assert cross_lesson_imports({"autoreg_ui/lessons/step/figures.py": lazy}) != []
    whole = imported_names("from autoreg_ui.lessons import tokens\n", "autoreg_ui.lessons.step.figures")
    assert cross_lesson_imports({"autoreg_ui/lessons/step/figures.py": whole}) != []


# ---------------------------------------------------------------- (b) shared modules import no lesson
def _shared_files() -> list[Path]:
    return [p for p in _ui_files() if p.parent == UI or p.is_relative_to(UI / "sharing")
            or p.is_relative_to(UI / "classroom")]


def shared_lesson_imports(files: dict[str, set[str]], allowed: set[str] = frozenset()) -> list[str]:
    return [f"{rel} imports {sorted(lessons_imported(names) or {'autoreg_ui.lessons'})}"
            for rel, names in sorted(files.items())
            if rel not in allowed and any(n == "autoreg_ui.lessons" or n.startswith("autoreg_ui.lessons.")
                                          for n in names)]


def test_no_shared_module_imports_a_lesson():
    files = {_rel(p): _imports(p) for p in _shared_files()}
    assert {"autoreg_ui/predict.py", "autoreg_ui/guide.py", "autoreg_ui/glossary_text.py",
            "autoreg_ui/lesson_page.py", "autoreg_ui/sharing/links.py", "autoreg_ui/classroom/mode.py"} <= set(files)
    assert shared_lesson_imports(files, SHARED_IMPORTS_ALLOWED) == []


def test_the_shared_rule_catches_a_shared_module_that_imports_a_lesson():
    names = imported_names("from autoreg_ui.lessons.inside.text import TTFT_MEANS\n", "autoreg_ui.glossary_text")
    assert shared_lesson_imports({"autoreg_ui/glossary_text.py": names}) == [
        "autoreg_ui/glossary_text.py imports ['inside']"]
    names = imported_names("from autoreg_ui import lessons\n", "autoreg_ui.guide")
    assert shared_lesson_imports({"autoreg_ui/guide.py": names}) != []


# ---------------------------------------------------------------- (c) no module past 400 lines
def too_long(lengths: dict[str, int], allowed: set[str] = frozenset()) -> list[str]:
    return [f"{rel}: {n} lines" for rel, n in sorted(lengths.items()) if n > MAX_LINES and rel not in allowed]


def test_no_module_runs_past_400_lines():
    lengths = {_rel(p): len(p.read_text(encoding="utf-8").splitlines())
               for p in _ui_files() + (_files_under(SERVER) if SERVER.is_dir() else [])}
    assert len(lengths) > 50
    assert too_long(lengths, TOO_LONG_ALLOWED) == []


def test_the_length_rule_catches_a_long_module():
    assert too_long({"autoreg_ui/predict.py": 401, "autoreg_ui/guide.py": 400}) == ["autoreg_ui/predict.py: 401 lines"]


# ---------------------------------------------------------------- (d) no import circle
def import_graph() -> dict[str, set[str]]:
    """Module of the tree → the tree's modules it imports (a ``from package import name`` counts only when the name
    is a module of its own)."""
    modules = {_module_name(p): p for p in _tree_files()}
    return {name: {n for n in _imports(path) if n in modules and n != name} for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted: every one is a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_modules_import_each_other_in_a_circle():
    graph = import_graph()
    assert {"app", "bench.click_cost", "autoreg_core.engine.session", "autoreg_ui.state"} <= set(graph)
    assert "autoreg_ui.predict" in graph["autoreg_ui.lessons.step.questions"]
    assert "autoreg_ui.state" in graph["autoreg_ui.predict"]  # imports inside functions count too
    assert circles(graph) == []


def test_the_circle_rule_catches_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    graph = {"autoreg_ui.guide": {"autoreg_ui.lessons.step.text"}, "autoreg_ui.lessons.step.text": set()}
    graph["autoreg_ui.lessons.step.text"] |= imported_names("from autoreg_ui import guide\n",
                                                            "autoreg_ui.lessons.step.text") & set(graph)
    assert circles(graph) == [["autoreg_ui.guide", "autoreg_ui.lessons.step.text"]]


# ---------------------------------------------------------------- (e) the wings of autoreg_core
def wing_breaches(files: dict[str, set[str]]) -> list[str]:
    """``files``: autoreg_core file → its imported names; the imports that cross a wall between the wings or leave
    the engine's world (the UI, the server package, the bench, a presentation library)."""
    outside = ("autoreg_ui", "autoreg_server", "bench", "deploy", "streamlit", "plotly", "pandas")
    walls = {"autoreg_core/engine/": ("autoreg_core.runtime", "autoreg_core.experiments"),
             "autoreg_core/runtime/": ("autoreg_core.experiments",)}
    found = []
    for rel, names in sorted(files.items()):
        banned = outside + next((wall for prefix, wall in walls.items() if rel.startswith(prefix)), ())
        found += [f"{rel} imports {name}" for name in sorted(names)
                  if any(name == b or name.startswith(b + ".") for b in banned)]
    return found


def test_the_engine_imports_no_wing_and_the_core_nothing_outside_it():
    files = {_rel(p): _imports(p) for p in _files_under(CORE)}
    assert {"autoreg_core/engine/session.py", "autoreg_core/runtime/batcher.py",
            "autoreg_core/experiments/sampling_lab.py"} <= set(files)
    assert wing_breaches(files) == []


def test_the_wing_rule_catches_a_breach():
    session = imported_names("from autoreg_core.runtime import batcher\n", "autoreg_core.engine.session")
    assert wing_breaches({"autoreg_core/engine/session.py": session}) == [
        "autoreg_core/engine/session.py imports autoreg_core.runtime",
        "autoreg_core/engine/session.py imports autoreg_core.runtime.batcher"]
    relative = imported_names("def f():\n    from ..experiments import rope\n", "autoreg_core.engine.decode")
    assert wing_breaches({"autoreg_core/engine/decode.py": relative}) != []
    runtime = imported_names("from autoreg_core.experiments.rope import x\n", "autoreg_core.runtime.batcher")
    assert wing_breaches({"autoreg_core/runtime/batcher.py": runtime}) != []
    ui = imported_names("import streamlit as st\n", "autoreg_core.experiments.rope")
    rope = "autoreg_core/experiments/rope.py"
    assert wing_breaches({rope: ui}) == [f"{rope} imports streamlit"]
    allowed = imported_names("from autoreg_core.engine import decode\n", "autoreg_core.experiments.rope")
    assert wing_breaches({"autoreg_core/experiments/rope.py": allowed}) == []


# ---------------------------------------------------------------- (f) the server package draws nothing
def server_breaches(files: dict[str, set[str]]) -> list[str]:
    banned = ("streamlit", "autoreg_ui", "plotly", "pandas")
    return [f"{rel} imports {name}" for rel, names in sorted(files.items()) for name in sorted(names)
            if any(name == b or name.startswith(b + ".") for b in banned)]


def test_the_server_package_is_pure_python():
    if not SERVER.is_dir():
        return
    files = {_rel(p): _imports(p) for p in _files_under(SERVER)}
    assert server_breaches(files) == []


def test_the_server_rule_catches_a_breach():
    names = imported_names("import streamlit as st\nfrom autoreg_ui import keys\n", "autoreg_server.settings")
    assert server_breaches({"autoreg_server/settings.py": names}) == [
        "autoreg_server/settings.py imports autoreg_ui", "autoreg_server/settings.py imports autoreg_ui.keys",
        "autoreg_server/settings.py imports streamlit"]


# ---------------------------------------------------------------- (g) tools never reach into tests/
TESTS_PATH = re.compile(r"""["'/]tests(/|["'])""")


def reaches_into_tests(files: dict[str, tuple[set[str], str]]) -> list[str]:
    """``files``: file → (its imported names, its source); the files that import ``tests`` or spell a path into it."""
    found = []
    for rel, (names, source) in sorted(files.items()):
        if any(n == "tests" or n.startswith("tests.") for n in names):
            found.append(f"{rel} imports tests")
        if TESTS_PATH.search(source):
            found.append(f"{rel} names a path into tests/")
    return found


def test_bench_and_deploy_never_reach_into_tests():
    files = {_rel(p): (_imports(p), p.read_text(encoding="utf-8"))
             for folder in ("bench", "deploy") for p in _files_under(ROOT / folder)}
    assert "bench/click_cost.py" in files
    assert reaches_into_tests(files) == []


def test_the_tests_rule_catches_a_breach():
    by_import = ("from tests.postgres import throwaway\n", "bench.lib.db")
    by_path = ('spec = importlib.util.spec_from_file_location("pg", ROOT / "tests" / "postgres.py")\n', "bench.soak")
    files = {f"{m.replace('.', '/')}.py": (imported_names(src, m), src) for src, m in (by_import, by_path)}
    assert reaches_into_tests(files) == ["bench/lib/db.py imports tests", "bench/soak.py names a path into tests/"]
    clean = "from bench.lib import stats\n"
    assert reaches_into_tests({"bench/x.py": (imported_names(clean, "bench.x"), clean)}) == []
