"""A lesson path in one tab: moving between stops, what each stop opens with, presenter mode carried."""
import pytest

from autoreg_ui import keys, lesson_path
from autoreg_ui.lesson_path import Path, PathStop

STOPS = (PathStop("Opening", "start", (), 3, "Say hello."),
         PathStop("Loop", "step", (("prompt", "The capital of France is"), ("cfg_temperature", "0")), 8, "Ask."),
         PathStop("Attention", "attention", (("prompt", "Hi"), ("steps", "4"), ("view", "causal-triangle")), 8,
                  "Step."),
         PathStop("Wrap-up", "start", (), 5, "Vote."))
PATH = Path("A 24-minute lesson", STOPS)


def test_no_path_until_one_is_begun_and_none_after_leaving():
    state = {}
    assert lesson_path.current(state) is None
    with pytest.raises(ValueError):
        lesson_path.move(state, 1, {}, False)
    lesson_path.begin(state, PATH, 2)
    assert lesson_path.current(state) == (PATH, 2)
    lesson_path.leave(state)
    assert lesson_path.current(state) is None and state == {}


def test_a_move_opens_the_stops_own_link_and_keeps_presenter_mode():
    state = {}
    lesson_path.begin(state, PATH)
    assert lesson_path.move(state, 1, {}, presenting=False) == (
        "pages/step.py", {"prompt": ["The capital of France is"], "cfg_temperature": ["0"]})
    page, query = lesson_path.move(state, 2, {}, presenting=True)
    assert page == "pages/attention.py" and query["present"] == ["1"] and query["view"] == ["causal-triangle"]
    assert lesson_path.current(state) == (PATH, 2)


def test_coming_back_to_a_stop_opens_it_as_it_was_left():
    state = {}
    lesson_path.begin(state, PATH, 1)
    left = {"prompt": "The capital of France is", "steps": "3", "present": "1", "embed_options": "dark_theme"}
    lesson_path.move(state, 2, left, presenting=True)
    page, query = lesson_path.move(state, 1, {"prompt": "Hi"}, presenting=True)
    assert page == "pages/step.py"
    assert query == {"prompt": ["The capital of France is"], "steps": ["3"], "present": ["1"]}
    lesson_path.begin(state, PATH, 1)  # a fresh start forgets how stops were left
    assert lesson_path.move(state, 2, {}, False)[1]["steps"] == ["4"]


def test_a_move_stays_inside_the_path():
    state = {}
    lesson_path.begin(state, PATH, 3)
    assert lesson_path.move(state, 9, {}, False)[0] == "pages/start.py" and state[keys.PATH_AT] == 3
    lesson_path.move(state, -4, {}, False)
    assert state[keys.PATH_AT] == 0


def test_the_sidebar_settings_go_to_their_widgets_and_an_absent_one_to_its_default():
    widgets, rest = lesson_path.sidebar_values({"prompt": ["x"], keys.CFG_TEMPERATURE: ["0"],
                                                keys.CFG_SEED: ["7"], keys.CFG_TOP_K: ["oops"]})
    assert rest == {"prompt": ["x"]}
    assert widgets[keys.CFG_TEMPERATURE] == 0.0 and widgets[keys.CFG_SEED] == 7
    assert widgets[keys.CFG_TOP_K] == 50 and widgets[keys.CFG_TOP_P] == 0.95 and widgets[keys.CFG_STOPS] == ""
    assert lesson_path.sidebar_values({keys.CFG_TEMPERATURE: ["9"]})[0][keys.CFG_TEMPERATURE] == 0.8  # out of range


def test_prepare_queues_the_switch_and_carry_turns_presenter_mode_back_on():
    state = {keys.PRESENT: True}
    lesson_path.begin(state, PATH)
    lesson_path.prepare(state, 1, {}, presenting=True)
    assert state[lesson_path.GO] == ("pages/step.py", {"prompt": ["The capital of France is"], "present": ["1"]})
    assert state[keys.CFG_TEMPERATURE] == 0.0
    state.pop(keys.PRESENT)  # Streamlit forgets the toggle in the run that switches page
    state[lesson_path.CARRY_PRESENT] = True
    lesson_path.carry_presenter(state)
    assert state[keys.PRESENT] is True and lesson_path.CARRY_PRESENT not in state
    lesson_path.carry_presenter(state)
    assert state[keys.PRESENT] is True


def test_the_bar_says_which_stop_of_how_many():
    from autoreg_ui import lesson_path_text as text

    assert text.where_text("A 45-minute lesson", 0, 7, "Opening", 3) == (
        "**A 45-minute lesson** · stop 1 of 7: **Opening** (3 min)")
    assert text.where_text("P", 6, 7, "Wrap-up", 5).endswith("stop 7 of 7: **Wrap-up** (5 min)")


def test_the_small_wordings_the_lesson_tripped_on():
    from types import SimpleNamespace

    from autoreg_ui.lessons.serving import text as serving_text
    from autoreg_ui.sharing import text as sharing_text

    assert sharing_text.rebuilt_text("the link", 0) == "Rebuilt from the link: its prompt (the link holds no steps)."
    assert sharing_text.rebuilt_text("the session file", 0) == ("Rebuilt from the session file: its prompt (the "
                                                                "session file holds no steps).")
    rebuilt = sharing_text.rebuilt_text
    assert rebuilt("the link", 1) == "Rebuilt from the link: the prompt and 1 step, replayed exactly."
    assert rebuilt("the link", 2) == "Rebuilt from the link: the prompt and 2 steps, replayed exactly."
    one = SimpleNamespace(passes=3, tokens=3, by_rows={1: 3})
    two = SimpleNamespace(passes=3, tokens=4, by_rows={1: 2, 2: 1})
    assert serving_text.live_sentence(one).endswith("carried 1 tab's step at once.")
    assert serving_text.live_sentence(two).endswith("carried 2 tabs' steps at once.")


def test_a_rare_token_has_a_full_height_column_to_click():
    import plotly.graph_objects as go

    from autoreg_ui.step_figures import CLICK_AREA, with_click_area

    fig = go.Figure([go.Bar(x=["a", "b", "rare"], y=[0.9, 0.09, 0.0001], customdata=[5, 7, 9]),
                     go.Bar(x=["a", "b", "rare"], y=[0.95, 0.05, 0.0], customdata=[5, 7, 9])])
    out = with_click_area(fig)
    area = out.data[0]
    assert area.name == CLICK_AREA and list(area.customdata) == [5, 7, 9]
    assert list(area.y) == [0.95] * 3  # as tall as the tallest bar, in every column
    assert len(out.data) == 3 and list(out.data[1].y) == [0.9, 0.09, 0.0001]
    assert with_click_area(go.Figure()).data == ()
