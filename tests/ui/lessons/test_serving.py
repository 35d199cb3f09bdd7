"""The serving page's controller without Streamlit: each experiment's work, its tables, and what serving_text says
about the results."""
from __future__ import annotations

import pytest

from autoreg_core import SamplingConfig
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import serving_measurements as measurements
from autoreg_core.experiments import speculative_decoding as speculative
from autoreg_ui import measuring
from autoreg_ui.lessons.serving import controller as serving
from autoreg_ui.lessons.serving import figures as figs
from autoreg_ui.lessons.serving import queue_text, speculation_text
from autoreg_ui.lessons.serving import text as serving_text


# ---------------------------------------------------------------- what the controller measures and says
def test_demo_queue_varies_prompts_and_answers(tiny):
    requests = measurements.demo_queue(tiny, 10, 32)
    assert [r.rid for r in requests] == list(range(10))
    assert [r.max_new for r in requests] == [32, 5, 16, 26, 8, 19, 3, 13, 32, 5]
    assert len({len(r.prompt_ids) for r in requests}) > 3
    with pytest.raises(ValueError, match="1 to 64 tokens"):
        measurements.demo_queue(tiny, 4, 65)


def test_serving_work_serves_both_ways_with_the_same_tokens(tiny):
    state, progress = {}, []
    work = measurements.serving_work(tiny, 5, 2, 8, lambda f, t: progress.append(f))
    found = measuring.measure(state, "q", "queue", (), work)
    assert found.complete and set(found.result) == set(scheduler.POLICIES)
    rows = serving.serving_rows(found.result)
    assert [r["batching"] for r in rows] == list(scheduler.POLICIES)
    assert [r["tokens"] for r in rows] == [sum(r.max_new for r in measurements.demo_queue(tiny, 5, 8))] * 2
    per_request = serving.request_rows(found.result, tiny.tokenizer)
    assert len(per_request) == 5 and all(r["same tokens both ways"] is True for r in per_request)
    assert progress == sorted(progress) and 0 < progress[-1] <= 1
    assert queue_text.serving_sentences(found.result)[0].startswith("Continuous batching served the queue")
    for run in found.result.values():
        assert len(figs.timeline_figure(run).data) == 3
    assert len(figs.waits_figure(found.result).data) == 4


def test_speculative_work_reports_every_draft_on_both_prompts(tiny):
    state = {}
    work = measurements.speculative_work(tiny, [speculative.PROMPT_LOOKUP, speculative.EARLY_EXIT], 1, 3, 12,
                                    SamplingConfig(temperature=0.0), lambda f, t: None)
    found = measuring.measure(state, "s", "spec", (), work)
    assert found.complete and [c.label for c in found.result] == list(measurements.SPEC_PROMPTS)
    rows = serving.speculative_rows(found.result)
    assert len(rows) == 2 * 3 and all(r["same tokens as plain"] is True for r in rows)
    case = found.result[0]
    for run in case.runs:
        text = speculation_text.speculative_sentence(case, run)
        speedup = case.plain.ms / run.ms  # the verdict the measured times imply, and only that one
        verdict = f"**{speedup:.2f}× faster**." if speedup >= 1 else f"**{speedup:.2f}×, slower**: "
        assert text.startswith(f"**{run.draft}** on “{case.label}”: ") and verdict in text
        assert ("faster**" in text) == (speedup >= 1) and ("slower**" in text) == (speedup < 1)
        assert len(serving.round_rows(run, tiny.tokenizer)) == len(run.rounds)
        assert len(figs.rounds_figure(run).data) == 4


def test_precision_and_dial_work(tiny):
    state = {}
    found = measuring.measure(state, "p", "precision", (), measurements.precision_work(tiny, lambda f, t: None))
    assert found.complete and [r.variant for r in found.result] == list(serving.precision.VARIANTS)
    table = serving.precision_rows(found.result, 10e9, tiny.tokenizer)
    assert [r["stored as"] for r in table] == list(serving.precision.VARIANTS)
    assert table[0]["KL from float32 (bits)"] == 0.0
    # the weight-only row builds a float32 copy at every step: no bytes-read or floor figure; the others have both
    for row in table:
        copies = row["stored as"] == serving.precision.INT8_WEIGHTS
        assert (row["read per step (MiB)"] is None) == copies and (row["bandwidth floor (ms)"] is None) == copies
        assert (row["measured ÷ floor"] is None) == copies and row["weights (MiB)"] > 0
    # one per path other than float32 (no collapse on the tiny model)
    assert len(serving_text.precision_sentences(found.result)) == 4
    dial = measuring.measure(state, "d", "dial", (), measurements.dial_work(tiny, 32, lambda f, t: None))
    assert [bits for bits, _ in dial.result] == list(measurements.DIAL_BITS)
    label = next(iter(serving_text.GROUPINGS))
    fallen = [bits for bits, q in dial.result if q.top1 < serving_text.COLLAPSE_TOP1]
    expected = (f"**{label}**: top-1 agreement falls below 90% at **{max(fallen)} bits**" if fallen else
                f"**{label}**: top-1 agreement stays above 90% down to {min(measurements.DIAL_BITS)} bits")
    sentence = serving_text.dial_sentence({label: dial.result})
    assert sentence.startswith(expected) and sentence.endswith(".")
    assert len(figs.dial_figure({"blocks": dial.result}).data) == 2


def test_batching_work_and_sentences(tiny):
    state = {}
    found = measuring.measure(state, "b", "batching", (), measurements.batching_work(tiny, 4, lambda f, t: None))
    assert [p.batch for p in found.result.points] == [1, 2, 4]
    rows = serving.batching_rows(found.result, tiny.spec, 10e9)
    assert [r["batch"] for r in rows] == [1, 2, 4] and rows[0]["tokens/s ÷ batch 1"] == 1.0
    lines = serving_text.batching_sentences(found.result, tiny.spec, 10e9, 50e9)
    assert lines[0].startswith("One row:") and "4 rows" in lines[0]
    assert len(figs.batching_figure(found.result, tiny.spec, 10e9).data) == 3
    assert len(figs.batching_figure(found.result, tiny.spec, 10e9, 50e9).data) == 4
    assert len(figs.bytes_figure(tiny.spec, [1, 2, 4], 32).data) == 2


def test_the_live_panels_figure_counts_passes_by_rows():
    fig = figs.pass_rows_figure({1: 5, 3: 2, 8: 1})
    bar = fig.data[0]
    assert list(bar.x) == [1, 3, 8] and list(bar.y) == [5, 2, 1]
    assert fig.layout.title.text == "Decode passes in the last minute, by rows"
    assert fig.layout.xaxis.title.text == "rows (tabs' steps) in one pass" and fig.layout.xaxis.dtick == 1


def test_a_round_rejects_at_most_one_guess_and_never_tests_the_rest():
    """k = 4: all kept; one kept then a rejection (two never tested); the first rejected (three never tested); no
    guess at all."""
    rounds = [speculative.Round([1, 2, 3, 4], 4, 9, 1.0, 2.0), speculative.Round([1, 2, 3, 4], 1, 9, 1.0, 2.0),
              speculative.Round([1, 2, 3, 4], 0, 9, 1.0, 2.0), speculative.Round([], 0, 9, 1.0, 2.0)]
    run = speculative.Speculated(tokens=[0] * 9, draft="d", k=4, rounds=rounds, forward_passes=5)
    series = {bar.name: list(bar.y) for bar in figs.rounds_figure(run).data}
    assert series == {"guesses kept": [4, 1, 0, 0], "model's own token": [1, 1, 1, 1], "guess rejected": [0, 1, 1, 0],
                      "guesses never tested": [0, 2, 3, 0]}
    assert "guesses rejected" not in series
    drafted = [len(r.drafted) for r in rounds]
    assert [a + b + c for a, b, c in zip(series["guesses kept"], series["guess rejected"],
                                         series["guesses never tested"])] == drafted
