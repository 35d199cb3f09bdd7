"""The race controller with a plain dict as state: run, stop (an interrupted script), recover, resume."""
from __future__ import annotations

import pytest

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments import kv_cost as cost
from autoreg_core.experiments.roofline import StepBudget
from autoreg_ui import messages
from autoreg_ui.lessons.cost import controller as race
from autoreg_ui.lessons.cost import keys as cost_keys

QUICK = dict(warmup=False, cached_repeats=(1, 1), naive_repeats=(1, 1))
SPEC = ModelSpec(name="hand", n_layers=2, n_heads=4, n_kv_heads=2, head_dim=16, hidden=64, vocab=100,
                 n_params=7400, body_params=1000, max_positions=256)


class Interrupted(BaseException):
    """What Streamlit raises inside a running script when Stop is clicked (a BaseException too)."""


def _point(L: int, cached: float = 1.0, naive: float = 2.0) -> cost.CostPoint:
    return cost.CostPoint(L, cached, naive, 1, 1, L - 1)


def test_key_is_a_frozen_tuple_of_setup_and_length(tiny):
    key = race.RaceKey.of(tiny, 32)
    assert key == race.RaceKey("tiny-llama", "cpu", "float32", 32)
    assert {key: 1}[race.RaceKey("tiny-llama", "cpu", "float32", 32)] == 1
    assert key.same_setup(race.RaceKey.of(tiny, 64)) and key != race.RaceKey.of(tiny, 64)
    assert not key.same_setup(race.RaceKey("other", "cpu", "float32", 32))


def test_length_choices():
    assert race.length_choices(256) == ([16, 32, 64, 128, 256], 256)
    assert race.length_choices(8192) == (race.LENGTH_CHOICES, 512)
    assert race.length_choices(10) == ([10], 10)
    assert race.length_choices(8192, cap=1024) == ([16, 32, 64, 128, 256, 512, 768, 1024], 512)
    assert race.length_choices(8192, cap=100) == ([16, 32, 64], 64)


def test_run_keeps_the_result_and_reports_progress(tiny):
    state, seen = {}, []
    key = race.RaceKey.of(tiny, 8)
    result = race.run(state, tiny, key, on_progress=lambda f, pts: seen.append([p.length for p in pts]), **QUICK)
    assert [p.length for p in result.points] == [1, 2, 3, 4, 5, 6, 7, 8] and result.complete
    assert race.race(state).results == {key: result} and race.race(state).running is None
    assert seen == [[1, 2, 3, 4, 5, 6, 7, 8][:n] for n in range(1, 9)]
    assert messages.take(state) == []


def test_stop_keeps_the_points_and_resume_measures_the_rest(tiny):
    state = {}
    key = race.RaceKey.of(tiny, 8)

    def stop_after_three(fraction, points):
        if len(points) == 3:
            raise Interrupted

    with pytest.raises(Interrupted):
        race.run(state, tiny, key, on_progress=stop_after_three, **QUICK)
    assert [p.length for p in race.race(state).running.points] == [1, 2, 3]
    race.recover(state)  # the next run of the page
    stopped = race.race(state).results[key]
    assert race.race(state).running is None
    assert stopped.stopped_early and [p.length for p in stopped.points] == [1, 2, 3]
    assert stopped.remaining == [4, 5, 6, 7, 8]
    assert any("Stopped early at length 3" in w for w in race.warnings(stopped))
    seen = []
    resumed = race.run(state, tiny, key, resume=True, on_progress=lambda f, pts: seen.append(len(pts)), **QUICK)
    assert [p.length for p in resumed.points] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert resumed.complete and resumed.lengths == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [p.cache_positions for p in resumed.points] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert seen == [4, 5, 6, 7, 8]  # the page's live chart sees the earlier points too
    assert race.race(state).results[key] is resumed


def test_recover_without_points_says_so():
    state = {}
    key = race.RaceKey("m", "cpu", "float32", 64)
    race.race(state).running = race.running(key, [1, 64], started=0.0)
    race.recover(state)
    assert race.race(state).results == {} and race.race(state).running is None
    assert messages.take(state) == [("warning", "The race was stopped before the first length was measured.")]
    race.recover(state)  # nothing left to recover
    assert messages.take(state) == []


def test_time_budget_and_failure_become_messages(tiny):
    state = {}
    assert race.run(state, tiny, race.RaceKey.of(tiny, 8), budget_s=0.0, **QUICK) is None
    assert messages.take(state) == [("warning", "The race was stopped before the first length was measured.")]
    too_long = race.RaceKey.of(tiny, tiny.spec.max_positions * 2)
    assert race.run(state, tiny, too_long, **QUICK) is None
    assert race.race(state).results == {} and race.race(state).running is None
    [(level, text)] = messages.take(state)
    assert level == "warning" and text.startswith("The measurement failed: ValueError")


def test_other_lengths_and_forget():
    state = {}
    kept = race.race(state)
    for n in (64, 16, 32):
        kept.keep(race.RaceKey("m", "cpu", "float32", n), cost.SweepResult("m", "cpu", "float32", [1, n]))
    kept.keep(race.RaceKey("other", "cpu", "float32", 8), cost.SweepResult("other", "cpu", "float32", [1, 8]))
    assert kept.result(race.RaceKey("m", "cpu", "float32", 16)).lengths == [1, 16]
    assert kept.result(race.RaceKey("m", "cpu", "float32", 8)) is None
    assert race.other_lengths(state, race.RaceKey("m", "cpu", "float32", 32)) == [16, 64]
    race.forget(state)
    assert race.race(state).results == {} and isinstance(state[cost_keys.COST_RACE], race.Race)


def test_merge_sorts_points_and_adds_times():
    before = cost.SweepResult("m", "cpu", "float32", [1, 2, 4], [_point(1), _point(2)], stopped_early=True,
                              prefill_ms=1.0, seconds=2.0)
    after = cost.SweepResult("m", "cpu", "float32", [4], [_point(4)], prefill_ms=3.0, seconds=5.0)
    merged = race.merge(before, after)
    assert [p.length for p in merged.points] == [1, 2, 4] and merged.lengths == [1, 2, 4]
    assert (merged.prefill_ms, merged.seconds, merged.complete) == (4.0, 7.0, True)
    assert race.merge(None, after) is after


# ---------------------------------------------------------------- what the page says
def test_count_rows_show_the_attention_that_remains():
    rows = {r["quantity"]: r for r in race.count_rows(SPEC, 1000)}
    positions = rows["token positions processed (projections, MLP)"]
    assert (positions["naive"], positions["KV cache"], positions["naive ÷ cache"]) == ("500,500", "1,000", "500.5×")
    per_head = rows["attention dot products per layer and head"]
    assert (per_head["naive"], per_head["KV cache"]) == ("167,167,000", "500,500")
    assert rows["FLOPs"]["KV cache"].endswith(" G") or rows["FLOPs"]["KV cache"].endswith(" M")
    assert len(rows) == 4


def test_naive_counts_sentence_names_both_counts():
    text = race.naive_counts_sentence(1000)
    assert "T² = 1,000,000" in text and "T(T+1)/2 = 500,500" in text
    assert "rough" in text and "exact" in text


def test_headline_total_and_file_name():
    result = cost.SweepResult("org/model name", "cpu", "float32", [1, 4], [_point(1, 2.0, 2.0), _point(4, 2.0, 8.0)],
                              seconds=3.25)
    assert race.headline(result) == [("Naive step at L = 4", "8 ms"), ("Cached step at L = 4", "2 ms"),
                                     ("Speed-up per step at L = 4", "4.0×"), ("Race took", "3.2 s")]
    # steps 1..4: cached 2+2+2+2 = 8 ms; naive 2+4+6+8 = 20 ms (interpolated)
    assert race.total_time_sentence(result.points) == (
        "Generating **4 tokens** one after another: about **0.0 s** naive vs **0.0 s** with the cache, **2.5×** "
        "faster over the whole run (per-step times interpolated between the measured lengths and summed).")
    assert race.total_time_sentence([]) is None
    assert race.csv_name(result) == "kv_cache_race_org_model_name_cpu_4.csv"
    assert race.warnings(result) == []


def test_fit_lines():
    pts = [cost.CostPoint(L, 5.0 + 0.01 * L, 1.0 + 0.5 * L + 0.002 * L * L, 1, 1) for L in (1, 10, 50, 100)]
    lines = race.fit_lines(cost.fits(pts))
    assert lines == ["- naive: 1.00 +0.5000·L +2.00e-03·L² ms (R² = 1.000)",
                     "- cached: 5.00 +0.01000·L ms (R² = 1.000)"]
    assert race.fit_lines(cost.fits(pts[:1])) == []


def test_decode_budget_by_hand():
    b = race.decode_budget(SPEC, 10, bandwidth=1e9, peak_flops=1e10)
    # weights (1000 + 64·100)·4 = 29,600 bytes; cache 10 positions · 512 = 5,120; FLOPs 2000 + 12,800 + 5,120
    assert (b.weight_bytes, b.cache_bytes, b.bytes_read, b.flops) == (29_600, 5_120, 34_720, 19_920)
    assert b.intensity == pytest.approx(19_920 / 34_720) and b.ridge == pytest.approx(10.0)
    assert b.memory_ms == pytest.approx(34_720 / 1e9 * 1000) and b.compute_ms == pytest.approx(19_920 / 1e10 * 1000)


@pytest.mark.parametrize("measured, says", [
    (None, "Run the race to compare"),
    (100.0, "well above both limits"),
    (0.001, "That is within 2× of the compute limit: on this machine the measured matmul peak is low enough that "
            "the arithmetic (0.1 ms at the peak) weighs as much as streaming the bytes."),
    (3.0, "Most of a decode step is spent streaming bytes"),
])
def test_verdict(measured, says):
    b = StepBudget(batch=1, L=10, weight_bytes=1_000_000, cache_bytes=0, flops=1_000_000, bandwidth=1e9,
                   peak_flops=1e10)
    # memory limit 1 ms, compute limit 0.1 ms
    text = race.verdict(b, measured)
    assert says in text and "**1.0 ms**" in text


def test_naive_growth_reads_the_race_over_its_longest_doubling():
    from autoreg_ui.lessons.cost import text as cost_text

    def race_of(naive_at_512: float):
        return [cost.CostPoint(L, 1.0, ms, 1, 1) for L, ms in ((128, 10.0), (256, 20.0), (512, naive_at_512))]
    linear, quadratic = race.naive_growth(SPEC, race_of(39.4)), race.naive_growth(SPEC, race_of(80.0))
    assert linear.startswith("One naive step's time grew **about linear (×1.97 per doubling)** from L = 256 to 512")
    assert quadratic.startswith("One naive step's time grew **about quadratic (×4.00 per doubling)** from L = 256")
    counted = race.per_doubling(SPEC.flops_step(256, False), SPEC.flops_step(512, False), 256, 512)
    assert cost_text.growth_reading(counted) in linear
    share = race.naive_attention_share(SPEC, 512)
    assert share == pytest.approx(SPEC.attention_flops_per_key * 512 * 513 / 2 / SPEC.flops_step(512, False))
    assert f"at L = 512 causal attention is {share:.0%} of a naive step's FLOPs" in linear
    # a race with a gap: the ratio is still per doubling (×8 over three doublings is ×2)
    assert race.per_doubling(1.0, 8.0, 64, 512) == pytest.approx(2.0)
    assert race.naive_growth(SPEC, race_of(40.0)[:1]) is None
    assert "\n\nOne naive step's time grew" in race.measured_vs_counted(SPEC, race_of(39.4))


def test_embedded_shape_naive_step_is_mostly_linear():
    """SmolLM2-135M's shape: attention is 8% of a naive step's FLOPs at L = 512 and 25% at 2,048."""
    smol = ModelSpec.preset("SmolLM2-135M", n_layers=30, n_heads=9, n_kv_heads=3, head_dim=64, hidden=576,
                            vocab=49_152, n_params=134_515_008, seq_len=8192, weight_bytes=4, cache_bytes=4, tied=True)
    assert round(race.naive_attention_share(smol, 512), 2) == 0.08
    assert round(race.naive_attention_share(smol, 2048), 2) == 0.25
    per = [race.per_doubling(smol.flops_step(L, False), smol.flops_step(2 * L, False), L, 2 * L)
           for L in (128, 256, 512, 1024)]
    assert [round(r, 2) for r in per] == [2.04, 2.08, 2.15, 2.29]  # counted; the issue measured 1.95, 1.97, 2.30


def test_roofline_marks_use_the_counts():
    marks = race.roofline_marks(SPEC, cost.CostPoint(10, 2.0, 4.0, 1, 1, 9))
    assert [m["name"] for m in marks] == ["decode step, L=10", "naive step, L=10"]
    assert [m["achieved"] for m in marks] == [19_920 / 0.002, 60_960 / 0.004]
    assert [m["intensity"] for m in marks] == [19_920 / 34_720, 60_960 / 29_600]  # FLOPs / bytes read
