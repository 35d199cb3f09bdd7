"""The app's session_state keys: every one a unique string, and a lesson's keys read by that lesson alone.

The shared ``autoreg_ui/keys.py`` holds what several pages read; each lesson's ``keys.py`` holds its own. A key of
one lesson read anywhere else (another lesson, a shared module, ``app.py``, ``bench/``) would tie that place to
the lesson's state, so the rule reads every import of a lesson's keys module, and every string a module outside
the lesson spells, with ``ast``.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

from conftest import ROOT
from test_architecture import imported_names

from autoreg_ui import keys

LESSONS = ROOT / "autoreg_ui" / "lessons"
LESSON_KEYS = sorted(p.parent.name for p in LESSONS.glob("*/keys.py"))
SCANNED = ("autoreg_ui", "pages", "bench", "deploy")  # tests may read any key: they check what users see


def key_strings(module) -> dict[str, str]:
    """Constant name → the string it holds (a JobKeys gives its kept, run, stop and table keys)."""
    out = {}
    for name, value in vars(module).items():
        if not name.isupper():
            continue
        if isinstance(value, str):
            out[name] = value
        elif isinstance(value, keys.JobKeys):
            out.update({f"{name}.{part}": getattr(value, part) for part in ("kept", "run", "stop", "table")})
    return out


def _lesson_keys(lesson: str) -> dict[str, str]:
    return key_strings(importlib.import_module(f"autoreg_ui.lessons.{lesson}.keys"))


def test_keys_are_unique_strings():
    values = {f"keys.{n}": v for n, v in key_strings(keys).items()}
    for lesson in LESSON_KEYS:
        values |= {f"{lesson}.{n}": v for n, v in _lesson_keys(lesson).items()}
    assert len(values) > 250 and len(LESSON_KEYS) == 11
    by_value: dict[str, list[str]] = {}
    for name, value in values.items():
        by_value.setdefault(value, []).append(name)
    assert {v: n for v, n in by_value.items() if len(n) > 1} == {}


def test_job_keys_derive_their_run_stop_and_table_keys():
    job = keys.JobKeys("srv_batch_kept")
    assert len({job.run, job.stop, job.table, job.kept}) == 4


# ---------------------------------------------------------------- a lesson's keys are its own
def owner(rel: str) -> str | None:
    """The lesson a file belongs to: its package, or its entry file in ``pages/``; None for everything else."""
    parts = rel.split("/")
    if parts[:2] == ["autoreg_ui", "lessons"] and len(parts) > 3:
        return parts[2]
    if parts[0] == "pages":
        return Path(parts[1]).stem
    return None


def _module(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _strings(source: str) -> set[str]:
    return {node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Constant)
            and isinstance(node.value, str)}


def key_breaches(sources: dict[str, str], lesson_keys: dict[str, dict[str, str]]) -> list[str]:
    """``sources``: file (relative to the root) → its text; ``lesson_keys``: lesson → its key names and strings.
    A file outside a lesson that imports the lesson's keys module, or spells one of its keys as a string."""
    found = []
    for rel, source in sorted(sources.items()):
        mine = owner(rel)
        names = imported_names(source, _module(rel), rel.endswith("__init__.py"))
        spelled = _strings(source)
        for lesson, strings in sorted(lesson_keys.items()):
            if lesson == mine:
                continue
            if f"autoreg_ui.lessons.{lesson}.keys" in names:
                found.append(f"{rel} imports the {lesson} lesson's keys")
            found += [f"{rel} spells the {lesson} lesson's key {name} ({value!r})"
                      for name, value in sorted(strings.items()) if value in spelled]
    return found


def _sources() -> dict[str, str]:
    files = [ROOT / "app.py", *(p for top in SCANNED for p in (ROOT / top).rglob("*.py"))]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in files
            if "__pycache__" not in p.parts}


def _distinct(strings: dict[str, str]) -> dict[str, str]:
    """A lesson's keys that are names of their own: a key that is also the lesson's page name ("cost") or a
    short prefix ("att", "lab") is a word other files say for other reasons, so only the import rule holds it."""
    return {name: value for name, value in strings.items() if "_" in value}


def test_every_key_in_a_lesson_is_read_by_that_lesson_alone():
    lesson_keys = {lesson: _distinct(_lesson_keys(lesson)) for lesson in LESSON_KEYS}
    sources = _sources()
    assert "autoreg_ui/sharing/links.py" in sources and "app.py" in sources
    assert any(owner(rel) == "attention" and "autoreg_ui.lessons.attention.keys"
               in imported_names(src, _module(rel)) for rel, src in sources.items())  # the rule sees real readers
    assert key_breaches(sources, lesson_keys) == []


def test_the_key_rule_catches_a_key_read_outside_its_lesson():
    lesson_keys = {"attention": {"ATT_LAYER": "att_layer"}, "cost": {"COST_RUN": "cost_run"}}
    breach = {
        "autoreg_ui/sharing/links.py": "from autoreg_ui.lessons.attention import keys as att\nx = att.ATT_LAYER\n",
        "autoreg_ui/lessons/cost/controller.py": "LAYER = 'att_layer'\n",
        "autoreg_ui/lessons/attention/controller.py": "from autoreg_ui.lessons.attention import keys\n",
        "pages/attention.py": "from . import x\nKEY = 'att_layer'\n",
        "app.py": "from autoreg_ui.lessons.cost.keys import COST_RUN\n",
    }
    assert key_breaches(breach, lesson_keys) == [
        "app.py imports the cost lesson's keys",
        "autoreg_ui/lessons/cost/controller.py spells the attention lesson's key ATT_LAYER ('att_layer')",
        "autoreg_ui/sharing/links.py imports the attention lesson's keys",
    ]
