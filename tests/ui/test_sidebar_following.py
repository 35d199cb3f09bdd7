"""A following student's sidebar under AppTest: none of their own settings drawn (the teacher's apply), and every
one of them back, whole, when they explore on their own or their class ends."""
from dataclasses import replace

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from autoreg_ui import keys, settings
from autoreg_ui.classroom import text as class_text

SETTING_WIDGETS = ("slider", "number_input", "text_area", "selectbox")
OWN = replace(settings.SIDEBAR_DEFAULTS, temperature=0.3, top_k=7, top_p=0.9, min_p=0.05, repetition_penalty=1.2,
              seed=11, max_new_tokens=20, stop_sequences=("END\n", "."))


@pytest.fixture
def class_file(class_app):
    """A fresh class file (``class_app`` in conftest)."""
    return class_app


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def _tab(tiny_folder, page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[keys.MODEL] = tiny_folder
    _ok(at.run())
    at.switch_page(page)
    return _ok(at.run())


def _set_own_settings(at: AppTest) -> None:
    for key, value in ((keys.CFG_TEMPERATURE, OWN.temperature), (keys.CFG_TOP_P, OWN.top_p),
                       (keys.CFG_MIN_P, OWN.min_p), (keys.CFG_REPETITION, OWN.repetition_penalty)):
        _ok(at.sidebar.slider(key=key).set_value(value).run())
    for key, value in ((keys.CFG_TOP_K, OWN.top_k), (keys.CFG_SEED, OWN.seed), (keys.CFG_MAX_NEW, OWN.max_new_tokens)):
        _ok(at.sidebar.number_input(key=key).set_value(value).run())
    _ok(at.sidebar.text_area(key=keys.CFG_STOPS).set_value("END\\n\n.").run())


def _own_widgets(at: AppTest) -> dict:
    """Every setting drawn in the sidebar, by key: its value."""
    return {w.key: w.value for kind in SETTING_WIDGETS for w in getattr(at.sidebar, kind)}


def _captions(at: AppTest) -> list[str]:
    return [c.value for c in at.sidebar.caption]


def _a_class_and_a_student_with_own_settings(tiny_folder):
    teacher = _tab(tiny_folder, "pages/step.py")
    teacher.session_state[keys.CFG_TEMPERATURE] = 0.0
    _ok(teacher.button(key=keys.CLASS_START).click().run())
    code = teacher.session_state[keys.CLASS_CODE]
    teacher.switch_page("pages/step.py")
    _ok(teacher.run())
    for _ in range(2):
        _ok(teacher.button(key="step_next").click().run())
    student = _tab(tiny_folder, "pages/step.py")
    _set_own_settings(student)
    assert student.session_state[keys.CONFIG] == OWN
    drawn = _own_widgets(student)
    assert set(drawn) == {s.key for s in settings.SETTINGS} | {keys.CFG_STOPS, keys.MODEL}
    student.query_params["class"] = code
    student.switch_page("pages/class.py")
    _ok(student.run())
    _ok(student.button(key=keys.CLASS_JOIN).click().run())
    return teacher, student, drawn


def _following_sidebar(at: AppTest) -> None:
    assert _own_widgets(at) == {}  # nothing of the learner's own to move while the teacher leads
    assert [h.value for h in at.sidebar.header] == ["Model"]  # no sampling settings, no share/save/load tools
    assert class_text.SIDEBAR_FOLLOWING in _captions(at)
    assert [t.key for t in at.sidebar.toggle] == [keys.PRESENT]
    assert at.session_state[keys.CONFIG] == OWN  # kept, not drawn


def test_a_follower_draws_no_settings_and_gets_their_own_back_whole_after_exploring(class_file, tiny_folder):
    teacher, student, drawn = _a_class_and_a_student_with_own_settings(tiny_folder)
    assert student.session_state[keys.CLASS_MODE] == "following"
    _following_sidebar(student)
    for _ in range(2):  # the teacher steps; the follower's page is drawn again, on the Class and the step page
        _ok(teacher.button(key="step_next").click().run())
        _following_sidebar(_ok(student.run()))
    student.switch_page("pages/step.py")
    _following_sidebar(_ok(student.run()))
    _ok(student.button(key=keys.CLASS_EXPLORE).click().run())
    _ok(student.run())
    assert student.session_state[keys.CLASS_MODE] == "exploring"
    assert _own_widgets(student) == drawn  # every setting, whole, as the learner left it
    assert student.session_state[keys.CONFIG] == OWN
    assert class_text.SIDEBAR_FOLLOWING not in _captions(student)
    assert [h.value for h in student.sidebar.header] == ["Model", "Sampling", "Teach with it", "Share and save"]
    _ok(student.button(key="step_next").click().run())  # their own step, with their own settings
    record = student.session_state[keys.SESSION].records[-1]
    assert record.kept <= OWN.top_k
    _ok(student.button(key=keys.CLASS_FOLLOW).click().run())
    _following_sidebar(student)


def test_a_followers_own_sidebar_comes_back_when_the_class_ends(class_file, tiny_folder):
    teacher, student, drawn = _a_class_and_a_student_with_own_settings(tiny_folder)
    _following_sidebar(student)
    teacher.switch_page("pages/class.py")
    _ok(teacher.run())
    _ok(teacher.button(key=keys.CLASS_END).click().run())
    _ok(teacher.button(key=keys.CLASS_END + "_sure").click().run())  # ending asks to be confirmed
    _ok(student.run())
    assert keys.CLASS_SEAT not in student.session_state
    assert class_text.CLASS_GONE in [w.value for w in student.warning]
    assert _own_widgets(student) == drawn
    assert student.session_state[keys.CONFIG] == OWN
