"""The sampling lab in Streamlit's AppTest: every slider redraws its charts without running the model."""
import pytest
import torch
from conftest import ROOT
from streamlit.testing.v1 import AppTest
from transformers import PreTrainedModel

from autoreg_ui.lessons.sampling import keys as sampling_keys


class ForwardCounter:
    """Counts forward passes of any causal LM (a global pre-hook, registered in this test only)."""

    def __init__(self):
        self.calls = 0
        self.handle = torch.nn.modules.module.register_module_forward_pre_hook(self._hook)

    def _hook(self, module, args):
        if isinstance(module, PreTrainedModel) and hasattr(module, "lm_head"):
            self.calls += 1

    def close(self):
        self.handle.remove()


def _charts(at) -> dict[str, str]:
    """Chart spec (JSON) by the widget key we gave it (element ids are '$$ID-<hash>-<key>')."""
    out = {}
    for el in at.get("plotly_chart"):
        proto = el.proto
        out[proto.id.split("-", 2)[-1]] = proto.spec
    return out


VIEW_OF = {"pipeline": "The pipeline, stage by stage", "draw": "The draw", "draws": "Draw many",
           "sweep": "Temperature sweep"}  # section 1's views: only the open one is drawn


def _charts_in_views(at, names) -> dict[str, str]:
    """The chart of each named view of section 1 (each opened in turn), and the strategies chart."""
    out = {}
    for name in names:
        if name in VIEW_OF:
            at.session_state[sampling_keys.LAB_VIEW] = VIEW_OF[name]
            at.run()
            assert not at.exception, [e.value for e in at.exception]
        chart = f"lab_{name}_chart"
        out[chart] = _charts(at).get(chart)
    return out


@pytest.fixture
def lab(embedded):
    from autoreg_core.runtime import prefix_cache

    prefix_cache.shared().clear()  # an earlier test's prefill of the same prompt would be a hit: no pass to count
    counter = ForwardCounter()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/sampling.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    yield at, counter
    counter.close()


def test_sliders_redraw_charts_without_a_forward_pass(lab):
    at, counter = lab
    assert counter.calls >= 1  # the prefill happened (once) while loading the page
    counter.calls = 0
    moves = [
        ("slider", "lab_temperature", 1.7, ["pipeline", "draw", "draws", "sweep"]),
        ("number_input", "lab_top_k", 7, ["pipeline", "draws"]),
        ("slider", "lab_top_p", 0.5, ["pipeline"]),
        ("slider", "lab_min_p", 0.3, ["pipeline"]),
        ("slider", "lab_top_n", 25, ["pipeline"]),
        ("number_input", "lab_seed", 11, ["draw", "draws"]),
        ("number_input", "lab_n", 5000, ["draws"]),
        ("number_input", "lab_strat_top_k", 3, ["strategies"]),
        ("slider", "lab_strat_top_p", 0.5, ["strategies"]),
        ("slider", "lab_strat_min_p", 0.4, ["strategies"]),
        ("slider", "lab_temperature", 0.0, ["pipeline", "draw"]),
    ]
    for kind, key, value, expect_changed in moves:
        before = _charts_in_views(at, expect_changed)
        if key == "lab_n":  # drawn in its own view
            at.session_state[sampling_keys.LAB_VIEW] = VIEW_OF["draws"]
            at.run()
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception, (key, [e.value for e in at.exception])
        after = _charts_in_views(at, expect_changed)
        for chart in after:
            assert after[chart] is not None and before[chart] is not None, (key, chart)
            assert after[chart] != before[chart], f"moving {key} did not change {chart}"
    _charts_in_views(at, ["draws"])  # N draws was set in its view; other views were open since: it was kept
    assert at.slider(key="lab_temperature").value == 0.0 and at.number_input(key="lab_n").value == 5000
    at.session_state[sampling_keys.LAB_VIEW] = VIEW_OF["pipeline"]
    at.run()
    assert [c.proto.id.split("-", 2)[-1] for c in at.get("plotly_chart")][0] == "lab_pipeline_chart"
    assert "lab_draw_chart" not in _charts(at)  # a closed view is not drawn
    assert any("greedy" in i.value for i in at.info)  # temperature 0 says it is greedy
    before = _charts(at)
    draw_again = [b for b in at.button if b.label == "Draw again"]
    assert [b.key for b in draw_again] == [sampling_keys.LAB_REDRAW]  # one Draw again: the lab's own, on key A
    assert draw_again[0].proto.shortcut.upper() == "A" and draw_again[0].help == "The next draw, with the next seed."
    before = _charts_in_views(at, ["draw"])
    at.button(key="lab_redraw").click().run()
    assert _charts_in_views(at, ["draw"])["lab_draw_chart"] != before["lab_draw_chart"]
    for key, value in (("lab_beam_width", 5), ("lab_beam_steps", 12), ("lab_beam_lp", 2.0),
                       ("lab_cont_k", 2), ("lab_cont_m", 3)):
        at.slider(key=key).set_value(value).run()
        assert not at.exception
    assert counter.calls == 0, f"{counter.calls} forward passes while only sliders moved"


def test_bad_input_gives_messages_not_crashes(lab):
    at, counter = lab
    at.session_state[sampling_keys.LAB_VIEW] = VIEW_OF["draws"]
    at.run()
    at.number_input(key="lab_n").set_value(500_000).run()
    assert any("above the cap" in w.value for w in at.warning)
    at.number_input(key="lab_top_k").set_value(10_000_000).run()
    assert any("larger than the vocabulary" in i.value for i in at.info)
    at.slider(key="lab_temperature").set_value(1.0)
    at.slider(key="lab_top_p").set_value(0.0).run()
    assert any("top-p 0" in i.value for i in at.info)
    at.slider(key="lab_min_p").set_value(1.0).run()
    assert not at.exception
    at.radio(key="lab_source").set_value("a prompt typed here").run()
    at.text_input(key="lab_prompt").set_value("   ").run()
    assert any("empty" in w.value for w in at.warning)
    assert not at.exception


def test_buttons_run_the_model_once_each(lab):
    at, counter = lab
    at.slider(key="lab_cont_k").set_value(2)
    at.slider(key="lab_cont_m").set_value(3).run()
    counter.calls = 0
    at.button(key="lab_cont_run").click().run()
    assert not at.exception
    assert counter.calls == 2 * 2  # two strategies × (3 tokens → 2 decode forwards), no prefill
    tables = [d.value for d in at.dataframe if "continuation" in d.value.columns]
    assert len(tables) == 2 and all(len(t) == 2 for t in tables)  # strategies A and B, K = 2 each
    at.slider(key="lab_beam_width").set_value(2)
    at.slider(key="lab_beam_steps").set_value(3).run()
    counter.calls = 0
    at.button(key="lab_beam_run").click().run()
    assert not at.exception
    assert 0 < counter.calls <= 2 + 2  # beam decode forwards + greedy path forwards, no prefill
    assert "lab_beam_chart" in _charts(at)
    counter.calls = 0
    at.slider(key="lab_temperature").set_value(2.0).run()  # results stay, nothing re-runs
    assert counter.calls == 0 and "lab_beam_chart" in _charts(at)


def test_every_section_shows_and_the_step_buttons_advance_the_session(lab):
    at, counter = lab
    headers = [h.value for h in at.main.header]
    assert [h.split(" · ")[0] for h in headers] == ["1", "2", "3", "4"]
    beam_text = " ".join(m.value for m in at.markdown)
    assert "ranked by the raw sum of log-probs" in beam_text and "applied to finished hypotheses" in beam_text
    def context_label(at):
        return next(e.label for e in at.expander if e.label.startswith("Context:"))

    context = context_label(at)
    counter.calls = 0
    before = _charts(at)
    at.button(key=f"{sampling_keys.LAB_STEP}_next").click().run()
    assert not at.exception
    assert counter.calls == 1  # one decode step, nothing else
    assert context_label(at) != context  # the lab's logits follow the new token
    assert _charts(at)["lab_pipeline_chart"] != before["lab_pipeline_chart"]
    at.button(key=f"{sampling_keys.LAB_STEP}_undo").click().run()
    assert not at.exception and context_label(at) == context
