"""A lesson's controller holds state and work, never drawing: read with ``ast`` (nothing is imported), no
``controller.py`` of a lesson may call Streamlit to put anything on the screen. Caching decorators, the tab's
state and the URL's parameters are state, not drawing. The rule is also run on a made-up controller that draws,
so a rule that stopped looking would fail."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LESSONS = ROOT / "autoreg_ui" / "lessons"
NOT_DRAWING = frozenset({"session_state", "cache_data", "cache_resource", "query_params"})


def _is_st(node: ast.expr) -> bool:
    """``st`` itself, or ``st`` as one side of ``a or st`` / ``st if c else a`` (drawing where told, else in the
    page)."""
    if isinstance(node, ast.Name):
        return node.id == "st"
    if isinstance(node, ast.BoolOp):
        return any(_is_st(value) for value in node.values)
    if isinstance(node, ast.IfExp):
        return _is_st(node.body) or _is_st(node.orelse)
    return False


def drawing_calls(source: str) -> list[str]:
    """Every ``st.<name>(…)`` call in ``source`` whose name draws, as ``line: st.name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_st(node.func.value):
            if node.func.attr not in NOT_DRAWING:
                found.append((node.lineno, f"{node.lineno}: st.{node.func.attr}"))
    return [call for _, call in sorted(found)]


def _controllers() -> dict[str, Path]:
    return {path.parent.name: path for path in sorted(LESSONS.glob("*/controller.py"))}


def test_no_lesson_controller_draws():
    controllers = _controllers()
    assert {"sampling", "hood", "cost", "serving", "attention", "inside"} <= set(controllers)
    breaches = {lesson: drawing_calls(path.read_text(encoding="utf-8")) for lesson, path in controllers.items()}
    assert {lesson: calls for lesson, calls in breaches.items() if calls} == {}


def test_the_rule_catches_a_controller_that_draws():
    source = ("import streamlit as st\n"
              "@st.cache_data(show_spinner=False)\n"
              "def sweep(x):\n"
              "    st.session_state['k'] = st.query_params.get('p')\n"
              "    return x\n"
              "def show(x, where=None):\n"
              "    st.markdown(x)\n"
              "    if (where or st).button('Run', key='run'):\n"
              "        with st.spinner('…'):\n"
              "            pass\n")
    assert drawing_calls(source) == ["7: st.markdown", "8: st.button", "9: st.spinner"]
    assert drawing_calls("import streamlit as st\n@st.cache_resource\ndef f():\n    return st.session_state\n") == []
