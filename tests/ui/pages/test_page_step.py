"""The step page under Streamlit's AppTest: every control, and bad input kept on the page."""

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from autoreg_core import SamplingConfig
from autoreg_ui import format, keys

APP = str(ROOT / "app.py")

pytestmark = pytest.mark.integration
TIMEOUT = 180


def _app():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/step.py")  # a bare / opens Start here
    at.run()
    assert not at.exception, at.exception
    return at


def _session(at):
    return at.session_state["session"]


def _open_view(at, label):
    """Open one of the step page's views (only the open one is drawn)."""
    at.session_state["step_view"] = label
    at.run()
    assert not at.exception, at.exception


def _strip(at):
    return "".join(m.value for m in at.markdown if "tokstrip" in m.value)


def test_next_generate_undo_reset_force(embedded):
    at = _app()
    assert at.title[0].value == "Step through generation"
    at.slider(key="cfg_temperature").set_value(0.0).run()
    at.button(key="step_next").click().run()
    assert not at.exception
    s = _session(at)
    assert len(s.records) == 1
    assert _strip(at).count('class="tok gen') == 1
    assert at.metric[0].value == "1"

    at.number_input(key="step_gen_n").set_value(5).run()
    at.button(key="step_generate").click().run()
    assert not at.exception and len(s.records) == 6
    assert _strip(at).count('class="tok gen') == 6
    assert at.dataframe.len == 0 and len(at.get("plotly_chart")) == 1  # only the open view is drawn
    _open_view(at, "History")
    assert at.dataframe[0].value.shape[0] == 6 and len(at.get("plotly_chart")) == 0
    assert "Download CSV (with the prompt and settings of every step)" in [b.label for b in at.get("download_button")]
    _open_view(at, "The chain rule, running")
    assert at.dataframe.len == 0 and [c.proto.id.endswith("logprob_chart") for c in at.get("plotly_chart")] == [True]

    at.button(key="step_undo").click().run()
    assert len(s.records) == 5 and s.cache_len == len(s.ids)

    _open_view(at, "Force the next token")
    at.text_input(key="force_text").input(" banana").run()
    at.button(key="force").click().run()
    assert s.records[-1].forced and s.records[-1].token_id == embedded.tokenizer(" banana")["input_ids"][0]

    at.text_input(key="force_text").input(" two tokens here").run()
    at.button(key="force").click().run()
    assert not at.exception and any("not a single token" in w.value for w in at.warning)
    assert len(s.records) == 6  # nothing lost

    at.button(key="step_reset").click().run()
    assert len(s.records) == 0 and _strip(at).count('class="tok gen') == 0


def test_stop_reason_is_shown(embedded):
    at = _app()
    at.slider(key="cfg_temperature").set_value(0.0).run()
    at.number_input(key="cfg_max_new").set_value(3).run()
    at.button(key="step_generate").click().run()
    assert any("max new tokens (3)" in s.value for s in at.success)
    at.button(key="step_next").click().run()
    assert any("stopped" in w.value.lower() for w in at.warning)
    assert len(_session(at).records) == 3


@pytest.mark.parametrize("prompt, expect", [
    ("   ", "empty"),
    ("word " * 9000, "at most"),
])
def test_bad_prompt_gets_a_message_and_keeps_the_session(embedded, prompt, expect):
    at = _app()
    at.button(key="step_next").click().run()
    before = _session(at)
    at.text_area(key="prompt_box").input(prompt).run()
    at.button(key="apply_prompt").click().run()
    assert not at.exception
    assert any(expect in e.value for e in at.error)
    assert _session(at) is before and len(before.records) == 1  # the old text is kept


@pytest.mark.parametrize("prompt", ["<script>alert('x')</script> <b>bold</b>", "مرحبا 🙂 \x07bell"])
def test_unusual_prompts_show_as_text(embedded, prompt):
    at = _app()
    at.text_area(key="prompt_box").input(prompt).run()
    at.button(key="apply_prompt").click().run()
    at.button(key="step_next").click().run()
    assert not at.exception
    strip = _strip(at)
    assert "<script>" not in strip and "<b>" not in strip


def test_chat_mode_and_sidebar_bad_values(embedded):
    at = _app()
    at.toggle(key="chat_box").set_value(True).run()
    at.button(key="apply_prompt").click().run()
    assert "&lt;|im_start|&gt;" in _strip(at)
    at.number_input(key="cfg_top_k").set_value(100000).run()
    at.slider(key="cfg_top_p").set_value(0.0).run()
    at.button(key="step_next").click().run()
    assert not at.exception
    infos = " ".join(i.value for i in at.sidebar.info)
    assert "larger than the vocabulary" in infos and "single most likely" in infos
    assert _session(at).records[-1].kept == 1


def test_unknown_model_in_link(embedded):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["model"] = "no/such-model"
    at.run()
    assert not at.exception
    assert any("Unknown model" in w.value for w in at.sidebar.warning)


def test_typed_force_text_survives_a_visit_to_another_view(embedded):
    at = _app()
    _open_view(at, "Force the next token")
    at.text_input(key="force_text").input(" banana").run()
    _open_view(at, "History")
    assert at.text_input.len == 0  # the force box is not drawn in this view
    _open_view(at, "Force the next token")
    assert at.text_input(key="force_text").value == " banana"


def test_a_chart_shows_its_numbers_as_a_table_when_asked(embedded):
    at = _app()
    at.slider(key="cfg_temperature").set_value(0.0).run()
    at.button(key="step_next").click().run()
    shown = len(at.dataframe)
    at.toggle(key="last_chart__table").set_value(True).run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == shown + 1
    table = at.dataframe[-1].value
    record = _session(at).records[-1]
    assert list(table.columns) == ["series", "token", "probability"]
    assert table["probability"].iloc[0] == pytest.approx(record.top_probs[0].item())


def test_predict_then_check_answers_only_after_a_choice_with_the_live_numbers(embedded):
    at = _app()
    answers = lambda: [m.value for m in at.markdown if m.value.startswith(("**Right.**", "**Not quite.**"))]  # noqa: E731
    assert answers() == [] and len(at.radio) == 0  # a closed box draws no question (one element per click)
    at.session_state[keys.PREDICT_BOX + "step"] = True  # the learner opens the box
    at.run()
    assert [r.key for r in at.radio] == ["predict_step_top", "predict_step_logprob", "predict_step_entropy"]
    assert answers() == []  # nothing is shown before the learner picks
    at.radio(key="predict_step_top").set_value(0).run()
    assert not at.exception, at.exception
    # temperature does not change the raw softmax
    p = float(_session(at).next_pipeline(SamplingConfig()).raw_probs.max())
    shown = answers()
    assert len(shown) == 1 and f"**{format.p_is(p)}**" in shown[0]
    assert shown[0].startswith("**Right.**" if p > 0.5 else "**Not quite.**")


def test_the_prompt_is_prefilled_when_the_page_opens_not_at_the_first_click(open_page):

    at = open_page("pages/step.py")
    session = at.session_state[keys.SESSION]
    assert session.prefill_record is not None and session.cache_len == session.prompt_len
    assert session.records == []  # nothing generated yet
