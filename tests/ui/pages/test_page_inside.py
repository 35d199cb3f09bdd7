"""The "Inside generation" page under Streamlit's AppTest, on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

import pytest
from clicks import click as _click

from autoreg_core.experiments.prefill_decode import PrefillPoint, sweep_lengths
from autoreg_ui import keys, measuring
from autoreg_ui.format import BYTE_UNITS_NOTE
from autoreg_ui.lessons.inside import controller as inside
from autoreg_ui.lessons.inside import keys as inside_keys
from autoreg_ui.lessons.inside import text as inside_text

PAGE = "pages/inside.py"


@pytest.fixture
def page(open_page):
    return open_page(PAGE)




def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_page_before_any_measurement(page):
    assert page.title[0].value == "Inside generation"
    assert [h.value for h in page.main.header] == ["1 · Training reads the whole text at once; generation cannot",
                                              "2 · The logit lens: a guess after every layer",
                                              "3 · Prefill vs decode, in the units people quote",
                                              "4 · When the cache runs out",
                                              "5 · The whole loop on four tokens",
                                              "6 · From the last hidden state to logits: W·h + b"]
    assert page.button(key=inside_keys.INSIDE_TEACHER.run).disabled  # nothing generated yet
    assert not page.metric  # every measurement waits for its button
    counts = [d.value for d in page.dataframe if "what is counted" in d.value.columns][0]
    assert list(counts["naive"])[0] == "9.95 k" and list(counts["KV cache"])[0] == "149"


def test_teacher_forcing_and_exposure_bias(page):
    for _ in range(3):
        _click(page, f"{inside_keys.INSIDE_PAGE}_next")
    page.number_input(key=inside_keys.INSIDE_FORCE_RANK).set_value(25)
    _click(page, inside_keys.INSIDE_FORCE)
    _click(page, f"{inside_keys.INSIDE_PAGE}_next")
    session = page.session_state[keys.SESSION]
    assert len(session.records) == 5 and [r.forced for r in session.records] == [False] * 3 + [True, False]
    assert session.records[3].rank == 25
    _click(page, inside_keys.INSIDE_TEACHER.run)
    numbers = _metrics(page)
    assert f"One pass over {len(session.ids)} tokens" in numbers
    assert float(numbers["Largest difference"].split()[0]) < 1e-4
    rows = [d.value for d in page.dataframe if "log-prob, one pass" in d.value.columns][0]
    assert list(rows["step"]) == [1, 2, 3, 4, 5] and list(rows["forced"]) == [False] * 3 + [True, False]
    assert any(m.value.startswith("**A simulated mistake.** Step 4 was forced:") for m in page.markdown)
    # a new token makes the kept scoring stale: it is not shown for the longer text
    _click(page, f"{inside_keys.INSIDE_PAGE}_next")
    assert not any(label.startswith("One pass over") for label in _metrics(page))


def test_logit_lens(page):
    _click(page, f"{inside_keys.INSIDE_PAGE}_next")
    _click(page, inside_keys.INSIDE_LENS.run)
    reading = page.session_state[inside_keys.INSIDE_LENS.kept].result
    session = page.session_state[keys.SESSION]
    assert reading.target_id == session.records[0].token_id and reading.depth == 3
    summary = inside_text.lens_summary(session.bundle.tokenizer, reading)  # the sentence the numbers imply
    assert summary.endswith("apart).") == (reading.first_top is not None)
    assert [m.value for m in page.markdown if m.value == summary] == [summary]
    assert len(page.get("plotly_chart")) == 3  # the lens's two and W·h + b's templates
    _click(page, f"{inside_keys.INSIDE_PAGE}_reset")  # the step number falls back inside the new bounds
    assert page.number_input(key=inside_keys.INSIDE_LENS_STEP).value == 1


def test_phases_sweep_worked_example_and_window(page):
    page.number_input(key=inside_keys.INSIDE_PHASE_NEW).set_value(6)
    page.run()
    _click(page, inside_keys.INSIDE_PHASES.run)
    assert len(page.session_state[inside_keys.INSIDE_PHASES.kept].result.generated_ids) <= 6
    assert "Time to first token" in _metrics(page)
    _click(page, inside_keys.INSIDE_SWEEP.run)
    sweep = page.session_state[inside_keys.INSIDE_SWEEP.kept]
    prompt = inside.measurement_prompt(page.session_state[keys.SESSION].bundle, None, inside.LONG_PROMPT,
                                       room=inside.MAX_NEW)
    assert [p.length for p in sweep.points] == sweep_lengths(len(prompt), 256) == [8, 16, 32, 64, 128]
    assert not sweep.running and not sweep.stopped
    assert any("one decode step costs as much as" in m.value for m in page.markdown)
    _click(page, inside_keys.INSIDE_EXAMPLE.run)
    worked = page.session_state[inside_keys.INSIDE_EXAMPLE.kept].result
    assert (worked.prompt_len, len(worked.generated_ids)) == (50, 100)
    page.slider(key=inside_keys.INSIDE_WINDOW_SIZE).set_value(4)
    page.run()
    _click(page, inside_keys.INSIDE_WINDOW.run)
    compared = page.session_state[inside_keys.INSIDE_WINDOW.kept].result
    assert compared.window == 4 and max(compared.windowed.cache_positions) == 3
    assert "Window cache at the end" in _metrics(page)
    assert BYTE_UNITS_NOTE in [c.value for c in page.caption]


def test_tab_prompt_choice(page):
    page.radio(key=inside_keys.INSIDE_PROMPT_CHOICE).set_value(inside.TAB_PROMPT)
    page.run()
    session = page.session_state[keys.SESSION]
    assert any(c.value == f"{session.prompt_len} prompt tokens." for c in page.caption)


def test_a_stopped_sweep_keeps_what_it_measured(page):
    """A Stop click reruns the script mid-sweep; the next run keeps the points measured so far."""
    bundle = page.session_state[keys.SESSION].bundle
    prompt = inside.measurement_prompt(bundle, None, inside.LONG_PROMPT, room=inside.MAX_NEW)
    lengths = sweep_lengths(len(prompt), bundle.spec.max_positions)
    sweep = inside.sweep_start(page.session_state, measuring.stamp(bundle, tuple(prompt[:lengths[-1]])), lengths)
    inside.sweep_add(sweep, PrefillPoint(8, 2.0, 1.0))
    page.run()
    assert not page.exception, page.exception
    kept = page.session_state[inside_keys.INSIDE_SWEEP.kept]
    assert not kept.running and kept.stopped and [p.length for p in kept.points] == [8]
    assert [w.value for w in page.warning] == [f"Stopped: 1 of {len(lengths)} lengths measured."]
    assert [c.key for c in page.get("plotly_chart")] == ["inside_sweep_fig", inside_keys.INSIDE_UNEMBED_FIG]


def test_toy_loop_and_w_h_plus_b_are_drawn_from_the_engine(page):
    from autoreg_core.experiments import toy_model as toy

    def frame_with(column):
        return next(d.value for d in page.dataframe if column in d.value.columns)

    trace = frame_with("pick")
    assert list(trace["pick"]) == [toy.VOCAB[s.pick] for s in toy.toy_trace("the")] == ["cat", "sat", "<eos>"]
    page.slider(key=inside_keys.INSIDE_TOY_TEMPERATURE).set_value(1.0).run()
    page.number_input(key=inside_keys.INSIDE_TOY_SEED).set_value(5).run()
    from autoreg_core import SamplingConfig

    expected = toy.toy_trace("the", SamplingConfig(temperature=1.0, seed=5))
    assert list(frame_with("pick")["pick"]) == [toy.VOCAB[s.pick] for s in expected]
    table = frame_with("cos θ")
    assert len(table) == 5 and (table["model's logit"] - table["W_t · h + b_t"]).abs().max() < 1e-3
    assert any("differs from the model's own logits by at most" in m.value for m in page.markdown)
