"""Presenter mode: ?present=1 once, large type, explanations folded, the one reload into the dark theme."""
import pytest
from streamlit.testing.v1 import AppTest

from autoreg_ui import keys
from autoreg_ui.sharing import presenter


@pytest.mark.parametrize("raw,on", [("1", True), ("true", True), ("on", True), ("0", False), ("no", False)])
def test_the_link_turns_presenter_mode_on_or_off(raw, on):
    state = {}
    assert presenter.read_link({"present": raw}, state) is on
    assert state[keys.PRESENT] is on


def test_the_link_applies_once_so_the_toggle_wins_afterwards():
    state = {}
    presenter.read_link({"present": "1"}, state)
    state[keys.PRESENT] = False  # the teacher switches it off; the URL still says 1 until it is rewritten
    assert presenter.read_link({"present": "1"}, state) is False
    assert presenter.read_link({}, state) is False


def test_a_bad_value_changes_nothing():
    state = {keys.PRESENT: True}
    assert presenter.read_link({"present": "<b>"}, state) is True
    assert presenter.read_link({"present": "maybe"}, {}) is False


def test_the_css_makes_every_rem_bigger_and_the_step_buttons_big():
    assert f"html {{ font-size: {presenter.ROOT_FONT_PX}px !important; }}" in presenter.CSS
    assert presenter.ROOT_FONT_PX >= 20
    assert '[class*="st-key-teacher_row"] button p' in presenter.CSS


def _page():
    import streamlit as st

    from autoreg_ui import keys
    from autoreg_ui.sharing import presenter

    st.toggle("Presenter mode", key=keys.PRESENT, on_change=presenter._changed)
    presenter.apply()
    presenter.explain("Why this **matters**.")


def _html(at) -> list[str]:
    return [h.proto.body for h in at.get("html")]


def test_in_a_page_explanations_fold_and_the_theme_reloads_once_each_way():
    at = AppTest.from_function(_page).run()
    assert [m.value for m in at.markdown] == ["Why this **matters**."] and not at.expander
    assert [b.strip() for b in _html(at)] == [presenter.BASE_CSS]  # dark text on the light token chips, always
    at.toggle(key=keys.PRESENT).set_value(True).run()
    assert not at.exception
    assert [e.label for e in at.expander] == ["Explanation"]
    assert at.expander[0].markdown[0].value == "Why this **matters**."
    bodies = _html(at)
    assert len(bodies) == 2
    assert sum(b.strip() == (presenter.BASE_CSS + presenter.CSS + presenter.DARK_CSS).strip() for b in bodies) == 1
    assert sum("const want = true;" in b for b in bodies) == 1
    at.toggle(key=keys.PRESENT).set_value(False).run()
    assert sorted("const want = false;" in b for b in _html(at)) == [False, True] and not at.expander  # light, once
    at.run()
    assert [b.strip() for b in _html(at)] == [presenter.BASE_CSS]
