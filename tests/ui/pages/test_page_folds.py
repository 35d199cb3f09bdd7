"""Less prose before the first click: on the step, cost, inside, hood, tricks and Start pages every
derivation (a formula, a FLOP or byte count, nats) sits in a closed box, in normal and presenter mode, while the
Notice / Try / Ask box is open outside presenter mode. Checked on the element tree AppTest draws, not on the source."""
from __future__ import annotations

import pytest

from autoreg_ui import guide, keys
from autoreg_ui.lessons.cost import text as cost_text
from autoreg_ui.lessons.hood import keys as hood_keys
from autoreg_ui.lessons.hood import text as hood_text
from autoreg_ui.lessons.inside import text as inside_text
from autoreg_ui.lessons.step import text as step_text
from autoreg_ui.lessons.tricks import text as tricks_text

PAGES = {"pages/cost.py": [cost_text.FLOPS_DERIVATION, cost_text.INTENSITY_DERIVATION],
         "pages/inside.py": [inside_text.WORKED_DERIVATION, inside_text.UNEMBED_DERIVATION],
         "pages/hood.py": [hood_text.LOSS_DERIVATION],
         "pages/tricks.py": [tricks_text.SPEC_DERIVATION],
         "pages/start.py": [],
         "pages/step.py": [step_text.CHAIN_RULE_LABEL]}
HEAD_FOLDED_WHEN_PRESENTING = {"pages/step.py"}  # lesson_page.set_up's formula: under "Explanation" on a projector


def _walk(node, folds=()):
    """Every element with the expanders it sits in, outermost first."""
    for child in getattr(node, "children", {}).values():
        inside = folds + (child,) if getattr(child, "type", "") == "expander" else folds
        yield child, folds
        yield from _walk(child, inside)


def _unfolded_derivations(at) -> list[str]:
    """Formulas (LaTeX blocks, Markdown with $…$) that are not inside a closed expander."""
    found = []
    for element, folds in _walk(at._tree):
        kind = getattr(element, "type", "")
        body = getattr(element, "value", "") if kind in ("markdown", "latex", "caption") else ""
        is_formula = kind == "latex" or (isinstance(body, str) and body.count("$") >= 2)
        if is_formula and not any(not f.proto.expanded for f in folds):
            found.append(f"{kind}: {body[:60]}")
    return found


def _expanders(at) -> dict[str, bool]:
    return {e.label: e.proto.expanded for e, _ in _walk(at._tree) if getattr(e, "type", "") == "expander"}


def _views(at, page: str):
    """The page as opened, and each of the hood's other sections, with the derivations each must draw."""
    yield at, PAGES[page]
    if page == "pages/hood.py":
        for label, folded in ((hood_text.POSITIONS, [hood_text.ROPE_DERIVATION]), (hood_text.DETERMINISM, [])):
            at.session_state[hood_keys.HOOD_SECTION] = label
            at.run()
            assert not at.exception, at.exception
            yield at, folded


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("page", list(PAGES))
def test_every_derivation_is_folded_and_the_prompts_are_open(open_page, page, present):
    at = open_page(page)
    if present:
        at.session_state[keys.PRESENT] = True
        at.run()
        assert not at.exception, at.exception
    for view, folded in _views(at, page):
        assert _unfolded_derivations(view) == []
        boxes = _expanders(view)
        for label in folded:
            if present and page in HEAD_FOLDED_WHEN_PRESENTING:
                break  # on a projector the page head's formula is in its closed Explanation box (checked above)
            assert boxes[label] is False, label  # drawn, and closed
        derivations = [e for e, _ in _walk(view._tree) if getattr(e, "type", "") == "expander"
                       and e.icon == guide.DERIVATION_ICON]
        assert [e.label for e in derivations if e.proto.expanded] == []
        prompts = [open_ for label, open_ in boxes.items() if label == guide.TITLE]
        assert prompts and all(open_ is (not present) for open_ in prompts)  # presenter: the path's note instead


def test_the_walk_finds_an_open_formula():
    """The check above can fail: a LaTeX block outside any expander is reported."""
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        st.latex("x^2")
        with st.expander("closed"):
            st.latex("y^2")
        with st.expander("open", expanded=True):
            st.markdown("$z$ and $w$")

    at = AppTest.from_function(script).run()
    assert _unfolded_derivations(at) == ["latex: $$\nx^2\n$$", "markdown: $z$ and $w$"]
