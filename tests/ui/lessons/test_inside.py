"""The "Inside generation" controller without Streamlit running (state is a dict, tiny model)."""
from __future__ import annotations

import pytest
import torch

from autoreg_core import SamplingConfig, Session, SessionError
from autoreg_core.experiments import prefill_decode as phases
from autoreg_core.experiments import sliding_window as window
from autoreg_core.experiments import teacher_forcing as teacher
from autoreg_core.experiments.prefill_decode import PrefillPoint
from autoreg_ui import measuring
from autoreg_ui.lessons.inside import controller as inside
from autoreg_ui.lessons.inside import keys as inside_keys
from autoreg_ui.lessons.inside import text as inside_text

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=200)


def test_long_prompt_is_hundreds_of_tokens_of_real_text(embedded):
    ids = embedded.tokenizer(inside.long_prompt_text())["input_ids"]
    assert 500 <= len(ids) < embedded.spec.max_positions - inside.MAX_NEW
    assert len(inside.worked_prompt(embedded)) == inside_text.WORKED_PROMPT


def test_measurement_prompt_fits_the_model(tiny):
    session = Session(tiny, "The cat sat on the")
    assert inside.measurement_prompt(tiny, session, inside.TAB_PROMPT, room=10) == session.prompt_ids
    long = inside.measurement_prompt(tiny, session, inside.LONG_PROMPT, room=100)
    assert long == tiny.tokenizer(inside.long_prompt_text())["input_ids"][:tiny.spec.max_positions - 100]
    assert len(long) == tiny.spec.max_positions - 100  # the tiny tokenizer makes the long text longer than 156


def test_kept_results_show_only_for_what_they_measured(tiny):
    state: dict = {}
    on = measuring.stamp(tiny, (1, 2, 3), 8)
    measuring.keep(state, inside_keys.INSIDE_PHASES.kept, measuring.Kept(on, "run"))
    assert measuring.kept(state, inside_keys.INSIDE_PHASES.kept, on).result == "run"
    assert measuring.kept(state, inside_keys.INSIDE_PHASES.kept, measuring.stamp(tiny, (1, 2, 3), 9)) is None
    assert measuring.kept(state, inside_keys.INSIDE_WINDOW.kept, on) is None


@pytest.mark.parametrize("kept, expected", [(None, 4), (9, 6), (0, 1), (3, 3)])
def test_clamp(kept, expected):
    state = {} if kept is None else {inside_keys.INSIDE_LENS_STEP: kept}
    inside.clamp(state, inside_keys.INSIDE_LENS_STEP, 1, 6, 4)
    assert state[inside_keys.INSIDE_LENS_STEP] == expected


def test_rank_token(tiny):
    session = Session(tiny, "The cat sat on the")
    probs = session.next_pipeline(GREEDY).raw_probs
    order = torch.argsort(probs, descending=True, stable=True)
    assert inside.rank_token(session, GREEDY, 1) == int(order[0])
    token = inside.rank_token(session, GREEDY, 20)
    assert probs[token] == probs[order[19]]
    with pytest.raises(SessionError):
        inside.rank_token(session, GREEDY, tiny.spec.vocab + 1)


def test_exposure_branch_and_teacher_rows(tiny):
    session = Session(tiny, "The cat sat on the")
    session.generate(3, GREEDY)
    assert inside.exposure_branch(tiny, session) is None
    session.force(inside.rank_token(session, GREEDY, 30), GREEDY)
    session.generate(4, GREEDY)
    branch = inside.exposure_branch(tiny, session)
    assert branch.step == 4
    assert branch.actual == session.generated_ids[3:] and len(branch.actual) == 5
    assert branch.own == phases.greedy_run(tiny, session.ids[:session.prompt_len + 3], 5).generated_ids
    scored = teacher.teacher_forced(tiny, session.ids, session.prompt_len)
    rows = inside.teacher_rows(tiny.tokenizer, session.records, scored)
    assert [r["step"] for r in rows] == list(range(1, 9))
    assert [r["forced"] for r in rows] == [False, False, False, True, False, False, False, False]
    one_pass = [r["log-prob, one pass"] for r in rows]
    assert [r["log-prob, step by step"] for r in rows] == pytest.approx(one_pass, abs=1e-4)
    labels = [m[0] for m in inside.teacher_numbers(session, scored)]
    assert labels == [f"One pass over {len(session.ids)} tokens", "Prefill + 7 decode passes", "Largest difference"]


def test_lens_target(tiny):
    session = Session(tiny, "The cat sat on the")
    session.generate(3, GREEDY)
    rec = session.records[1]
    assert inside.lens_target(session, 2) == (session.ids[:rec.context_len], rec.token_id)
    assert inside.lens_target(session, 4) == (session.ids, None)


def test_marked_text(tiny):
    ids = tiny.tokenizer("The cat sat")["input_ids"]
    assert inside.marked_text(tiny.tokenizer, ids, None) == tiny.tokenizer.decode(ids)
    marked = inside.marked_text(tiny.tokenizer, ids, 1)
    assert marked == tiny.tokenizer.decode(ids[:1]) + inside.DIVERGES + tiny.tokenizer.decode(ids[1:])


def test_worked_rows_and_numbers(tiny):
    rows = inside.worked_rows(phases.worked_counts(tiny.spec, 50, 100))
    assert [(r["naive"], r["KV cache"]) for r in rows][0] == ("9.95 k", "149")
    run = phases.greedy_run(tiny, tiny.tokenizer("The cat")["input_ids"], 4)
    assert [m[0] for m in inside.phase_numbers(run)] == [
        "Time to first token", "Tokens per second", "Prefill, per prompt token", "Decode, per token",
        "Decode ÷ prefill per token"]
    compared = window.compare_window(tiny, tiny.tokenizer("The cat sat on the mat")["input_ids"], 4, 3)
    numbers = inside.window_numbers(compared)
    assert numbers[2][2].startswith(f"{compared.windowed.cache_positions[-1]} positions")


def test_an_interrupted_sweep_keeps_its_points(tiny):
    state: dict = {}
    on = measuring.stamp(tiny, (1, 2, 3))
    sweep = inside.sweep_start(state, on, [8, 16, 32])
    assert inside.sweep_add(sweep, PrefillPoint(8, 1.0, 2.0)) == pytest.approx(1 / 3)
    inside.sweep_settle(state)  # the next script run: Stop was clicked
    kept = inside.sweep_of(state, on)
    assert kept is sweep and not kept.running and kept.stopped
    assert [p.length for p in kept.points] == [8]
    assert inside.sweep_of(state, measuring.stamp(tiny, (1, 2))) is None


def test_a_finished_sweep_is_not_stopped(tiny):
    state: dict = {}
    sweep = inside.sweep_start(state, measuring.stamp(tiny), [4])
    inside.sweep_add(sweep, PrefillPoint(4, 1.0, 2.0))
    inside.sweep_finish(sweep)
    inside.sweep_settle(state)
    assert not sweep.running and not sweep.stopped


def test_run_sweep_keeps_points_and_reports_progress(tiny):
    state: dict = {}
    ids = tiny.tokenizer("The cat sat on the mat. The dog sat on the log.")["input_ids"]
    seen = []
    sweep = inside.run_sweep(state, tiny, ids, measuring.stamp(tiny), [4, 8],
                             lambda done, text: seen.append((done, text)))
    assert state[inside_keys.INSIDE_SWEEP.kept] is sweep and [p.length for p in sweep.points] == [4, 8]
    assert seen == [(0.5, "L = 4 measured"), (1.0, "L = 8 measured")]
    assert not sweep.running and not sweep.stopped
    late = inside.run_sweep(state, tiny, ids, measuring.stamp(tiny), [4, 8], lambda done, text: None, budget_s=-1.0)
    assert late.points == [] and late.stopped
