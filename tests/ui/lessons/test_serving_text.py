"""What the serving page says around its measurements."""
from types import SimpleNamespace

import pytest

from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments import serving_measurements as measurements
from autoreg_ui.lessons.serving import controller as serving
from autoreg_ui.lessons.serving import text


def test_captions_carry_their_numbers():
    assert text.measuring_now("precision table") == ("Measuring now on this server: precision table. A click of "
                                                     "yours waits in line behind it.")
    assert text.rounds_title("open-ended", "prompt lookup") == "Every round: “open-ended” with prompt lookup"
    said = text.precision_caption(40, 120)
    assert "filled the cache to 40 positions." in said and "KL and top-1 over 120 positions of a fixed text." in said
    assert text.dial_label(measurements.DIAL_BITS) == f"Round the layers' weights to {measurements.DIAL_BITS[0]}…2 bits"
    from autoreg_core.experiments import precision

    assert text.dial_sentence({"blocks": [(8, precision.Quality(0.1, 0.99, 10.0, 40))]}).endswith(
        "down to 8 bits. The dial rounds the decoder layers' Linear weights only: the token embedding and the LM "
        "head (one tied matrix in SmolLM2) stay float32.")
    assert text.MEASURED_LIVE.startswith(" ")  # it follows the byte-units note in one caption


def test_the_live_panel_says_what_it_counts():
    from autoreg_core.runtime.batcher import ServerNow, Totals

    now = ServerNow(passes=3, tokens=9, window_s=60.0, by_rows={1: 1, 4: 2}, since_start=Totals(1200, 3456, 2001))
    assert text.live_totals(now) == ("Since this server started: 1,200 passes served 3,456 tokens, 2,001 of them in "
                                     "a pass shared with another tab's step.")
    one = ServerNow(1, 1, 60.0, {1: 1}, Totals(1, 1, 0))
    assert text.live_totals(one).startswith("Since this server started: 1 pass served 1 token, 0 of them")
    assert text.live_sentence(now) == "3 passes served 9 tokens; the largest pass carried 4 tabs' steps at once."
    assert dict(text.live_metrics(now, 3))["Your last step rode with"] == "2 other tabs"
    assert dict(text.live_metrics(now, None))["Your last step rode with"] == "—"
    assert text.live_auto_label(serving.LIVE_EVERY_S) == f"Update every {serving.LIVE_EVERY_S:g} s"


def test_the_live_panel_redraws_on_a_timer_of_a_few_seconds_or_not_at_all():
    assert 1 <= serving.live_every(True) <= 10 and serving.live_every(False) is None


# ---------------------------------------------------------------- claims read from the measurements


@pytest.mark.parametrize("ratio, reading", [
    (1.05, "the step barely slowed (×1.05) for 8× the rows"),
    (1.19, "the step barely slowed (×1.19) for 8× the rows"),
    (1.21, "the step took ×1.21 the time for 8× the rows: the extra rows cost little"),
    (1.99, "the step took ×1.99 the time for 8× the rows: the extra rows cost little"),
    (2.01, "the step took ×2.01 the time for 8× the rows: each row cost less than alone, but far from nothing"),
    (7.9, "the step took ×7.90 the time for 8× the rows: each row cost less than alone, but far from nothing"),
    (8.1, "the step took ×8.10 the time for 8× the rows: no gain, the rows cost as much together as alone"),
])
def test_a_batched_step_is_read_from_its_measured_ratio(ratio, reading):
    assert text.step_growth_reading(ratio, 8) == reading


def _sweep(*ms_by_batch):
    sweep = batching.BatchSweep("m", 64, [b for b, _ in ms_by_batch])
    sweep.points = [batching.BatchPoint(b, 64, ms, 3) for b, ms in ms_by_batch]
    return sweep


def test_the_batching_sentences_say_the_measured_latency_factor():
    from autoreg_core.engine.model_spec import PRESETS

    spec = PRESETS["GPT-2 Small"]
    # the README's run: 51.5 ms at batch 1, 193.1 ms at batch 32
    lines = text.batching_sentences(_sweep((1, 51.5), (8, 80.0), (32, 193.1)), spec, 10e9, 50e9)
    assert lines[0] == ("One row: **52 ms** per decode step, 19 tokens/s. 32 rows: **193 ms** per step; the step "
                        "took ×3.75 the time for 32× the rows: each row cost less than alone, but far from nothing: "
                        "**8.5× the throughput**. Each sequence now waits 193 ms for every token instead of 52 ms: the "
                        "server buys 8.5× the throughput with 3.7× the latency per token.")
    assert lines[1] == ("Up to **batch 8** a step took less than 2× a single-row step (1.55× at batch 8): the extra "
                        "rows rode along on the same weight read.")
    # the busy CPU of the issue: 69 ms at batch 1, 118 ms at batch 2, so not "barely slows"
    busy = text.batching_sentences(_sweep((1, 69.0), (2, 118.0)), spec, 10e9, 50e9)
    assert "the step took ×1.71 the time for 2× the rows: the extra rows cost little" in busy[0]
    assert "barely" not in busy[0] and "a little latency" not in busy[0]
    slow = text.batching_sentences(_sweep((1, 50.0), (2, 150.0)), spec, 10e9, 50e9)
    assert slow[1] == ("Already at batch 2 a step took 3.00× a single-row step, not less than 2×: on this machine "
                       "extra rows were not cheap (other work on the cores, or products too small to run faster "
                       "batched).")
    assert "no gain" in slow[0]


def test_a_throughput_fall_is_not_blamed_on_being_compute_bound():
    from autoreg_core.engine.model_spec import PRESETS

    lines = text.batching_sentences(_sweep((1, 50.0), (4, 60.0), (8, 200.0)), PRESETS["GPT-2 Small"], 10e9, 50e9)
    assert lines[-1] == ("Throughput peaked at batch 4 (67 tokens/s) and fell to 40 at batch 8. Being compute-bound "
                         "would only flatten it; a fall means each extra row cost more than its share: its own cache "
                         "reads, larger intermediate tensors that no longer fit the processor's caches, or other work "
                         "on the machine taking the cores.")
    rising = text.batching_sentences(_sweep((1, 50.0), (4, 60.0), (8, 70.0)), PRESETS["GPT-2 Small"], 10e9, 50e9)
    assert not any("peaked" in line for line in rising)


def _run(tokens_per_s: float, ttft_ms: list[float], passes: int = 10, wasted: int = 0):
    served = [SimpleNamespace(first_token_ms=t) for t in ttft_ms]
    return SimpleNamespace(done=True, finished=lambda: served, tokens_per_s=tokens_per_s, wasted_rows=wasted,
                           forward_passes=passes)


def test_the_serving_comparison_reads_sooner_or_later_and_faster_or_slower_from_the_numbers():
    sooner = text.serving_sentences({scheduler.STATIC: _run(20.0, [1000, 3000], 8, 6),
                                     scheduler.CONTINUOUS: _run(25.0, [500, 1500], 9)})
    assert sooner == [
        "Continuous batching served the queue at **25.0 tokens/s** against 20.0 for static batches, and the first "
        "token came after **1.00 s** on average instead of 2.00 s (sooner; time to first token counts from the "
        "moment the queue arrived: waiting for a row, then its prefill, then the first choice): a queued request "
        "starts as soon as any row frees up, not when the whole batch ahead of it is done. Static batching spent 6 "
        "row-steps computing for requests that had already finished."]
    later = text.serving_sentences({scheduler.STATIC: _run(20.0, [1000, 1000], 8),
                                    scheduler.CONTINUOUS: _run(15.0, [1500, 1500], 12)})
    assert "instead of 1.00 s (later; time to first token" in later[0]
    assert later[0].endswith("then the first choice): here the waiting it saved did not pay for the prefills of "
                             "requests joining the batch. Static batching spent 0 row-steps computing for requests "
                             "that had already finished.")
    assert later[1].startswith("Here continuous batching was **slower** in tokens/s: it made 12 model passes against 8")
    assert later[1].endswith("padding it saves.")
    slower_but_sooner = text.serving_sentences({scheduler.STATIC: _run(20.0, [2000], 8),
                                                scheduler.CONTINUOUS: _run(15.0, [1000], 12)})
    assert slower_but_sooner[1].endswith("padding it saves; its win in waiting time stays.")


def test_precision_says_what_real_int8_kernels_do():
    said = text.PRECISION
    assert "what llama.cpp and most servers do" not in said
    assert ("llama.cpp's CPU kernels for Q8_0 and Q4_1 round each activation vector to 8 bits too, in blocks of 32 "
            "with a scale of their own, and multiply in integers") in said
    assert "GPU weight-only kernels multiply in fp16 or bf16" in said and "**scale granularity**" in said
    assert "exactly the tokens" not in text.CONTINUOUS_BATCHING and text.BATCHED_ROUNDING in text.CONTINUOUS_BATCHING
    assert "token for token" not in text.SPECULATIVE and "or failing that the last one, take the earliest match" in (
        text.SPECULATIVE)
    assert "barely slows" not in text.BATCHING and "a little latency" not in text.BATCHING
    assert "the output is unchanged" not in text.INTRO and "the model's own distribution" in text.INTRO


@pytest.mark.parametrize("top1, reading", [
    (1.0, "The weights alone, one scale per 32 values, lose almost nothing at 8 bits (top-1 agreement 100%, KL 0.001 "
          "bits)"),
    (0.98, "The weights alone, one scale per 32 values, lose a little at 8 bits (top-1 agreement 98%, KL 0.001 bits)"),
    (0.85, "Even the weights alone, one scale per 32 values, moved far at 8 bits here (top-1 agreement 85%, KL 0.001 "
           "bits)"),
])
def test_weight_only_rounding_is_read_from_its_measured_agreement(top1, reading):
    from autoreg_core.experiments import precision

    assert text.weights_only_reading(precision.Quality(0.001, top1, 10.0, 40)) == reading
