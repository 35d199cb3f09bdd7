"""What the serving page says around its measurements."""
from types import SimpleNamespace

import pytest

from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments import serving_measurements as measurements
from autoreg_ui.lessons.serving import controller as serving
from autoreg_ui.lessons.serving import live_text, speculation_text, text


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


@pytest.mark.parametrize("ratio, batch, reading", [
    (0.98, 8, "the step took ×0.98 the time for 8× the rows: no slower, the extra rows took no time that this "
              "measurement could see"),
    (1.00, 8, "the step took ×1.00 the time for 8× the rows: no slower"),
    (1.05, 8, "the step took ×1.05 the time for 8× the rows: each extra row cost 0.01 of a single-row step, little"),
    (2.70, 8, "each extra row cost 0.24 of a single-row step, little"),  # 1.7 ÷ 7 = 0.243: just under a quarter
    (2.80, 8, "each extra row cost 0.26 of a single-row step, less than alone but far from nothing"),
    (7.9, 8, "each extra row cost 0.99 of a single-row step, less than alone but far from nothing"),
    (8.0, 8, "each extra row cost 1.00 of a single-row step, no gain: the rows cost as much together as alone, or "
             "more"),
    (8.1, 8, "each extra row cost 1.01 of a single-row step, no gain"),
    # the same ratio is cheap for 16 rows and dear for 2: at B = 2 a ratio of 1.9 is a second row at 0.9 of a row
    (1.9, 16, "the step took ×1.90 the time for 16× the rows: each extra row cost 0.06 of a single-row step, little"),
    (1.9, 2, "the step took ×1.90 the time for 2× the rows: each extra row cost 0.90 of a single-row step, less than "
             "alone but far from nothing"),
    (1.24, 2, "each extra row cost 0.24 of a single-row step, little"),
    (1.26, 2, "each extra row cost 0.26 of a single-row step, less than alone"),
])
def test_a_batched_step_is_read_from_what_each_extra_row_cost(ratio, batch, reading):
    said = text.step_growth_reading(ratio, batch)
    assert reading in said
    extra = (ratio - 1) / (batch - 1)
    assert ("little" in said) == (0 < extra < text.CHEAP_ROW) and ("no gain" in said) == (extra >= 1)
    assert "barely" not in said and "the extra rows cost little" not in said


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
                        "took ×3.75 the time for 32× the rows: each extra row cost 0.09 of a single-row step, little: "
                        "**8.5× the throughput**. Each sequence now waits 193 ms for every token instead of 52 ms: the "
                        "server buys 8.5× the throughput with 3.7× the latency per token.")
    assert lines[1] == ("The largest batch whose step took less than 2× a single-row step was **batch 8**: the step "
                        "took ×1.55 the time for 8× the rows: each extra row cost 0.08 of a single-row step, little.")
    assert "rode along" not in " ".join(lines) and "bends earlier" not in " ".join(lines)  # batch 8 > B ≈ 5
    # the busy CPU of the issue: 69 ms at batch 1, 118 ms at batch 2: the second row cost 0.71 of a row, not "little"
    busy = text.batching_sentences(_sweep((1, 69.0), (2, 118.0)), spec, 10e9, 50e9)
    assert ("the step took ×1.71 the time for 2× the rows: each extra row cost 0.71 of a single-row step, less than "
            "alone but far from nothing") in busy[0]
    assert "little" not in busy[0] and "barely" not in busy[0] and "a little latency" not in busy[0]
    assert busy[2].endswith("The measured curve bends earlier, likely because products this small run far below the "
                            "measured matmul peak (not measured here).")  # batch 2 < B ≈ 5
    assert "a CPU" not in " ".join(busy)
    slow = text.batching_sentences(_sweep((1, 50.0), (2, 150.0)), spec, 10e9, 50e9)
    assert slow[1] == ("Already at batch 2 the step took ×3.00 the time for 2× the rows: each extra row cost 2.00 of a "
                       "single-row step, no gain: the rows cost as much together as alone, or more; that is not under "
                       "2× a single-row step (likely other work on the cores, or products too small to run faster "
                       "batched; not measured here).")
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


# ---------------------------------------------------------------- precision, exactness, batching, speculation
def test_precision_says_what_real_int8_kernels_do():
    said = text.PRECISION
    assert "what llama.cpp and most servers do" not in said
    assert ("llama.cpp's kernels for Q8_0 and Q4_1, on the CPU and in its CUDA back end's quantized matrix kernels "
            "(MMVQ, MMQ), round each activation vector to 8 bits too, in blocks of 32 with a scale of their own, and "
            "multiply in integers") in said
    assert "GPU weight-only kernels multiply in fp16 or bf16" not in said  # llama.cpp's CUDA kernels do not
    assert ("other GPU weight-only kernels, such as Marlin for GPTQ and AWQ files, multiply the unpacked weights by "
            "16-bit activations") in said and "**scale granularity**" in said
    assert "one scale per 32 values usually costs little (the Q8_0 row measures it here)" in said
    assert "(Q8_0)" in text_precision_variant()
    assert "exactly the tokens" not in text.CONTINUOUS_BATCHING and text.BATCHED_ROUNDING in text.CONTINUOUS_BATCHING
    assert "token for token" not in text.SPECULATIVE and "or failing that the last one, take the earliest match" in (
        text.SPECULATIVE)
    assert "barely slows" not in text.BATCHING and "a little latency" not in text.BATCHING
    assert "the output is unchanged" not in text.INTRO and "the model's own distribution" in text.INTRO


def text_precision_variant() -> str:
    """The precision table's name for the weight-only row, which the sentence calls "the Q8_0 row"."""
    from autoreg_core.experiments import precision

    return precision.INT8_WEIGHTS


def _identity_int8(n: int = 64):
    """torch's dynamic int8 Linear, built as the precision table builds it, around an n × n identity weight."""
    import warnings

    import torch
    from torch import nn

    lin = nn.Linear(n, n, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.eye(n))
    model = nn.Sequential(lin)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.ao.quantization.quantize_dynamic(model, {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig},
                                               inplace=True)
    return model


def test_int8_has_a_scale_per_output_row_for_weights_and_one_per_tensor_for_activations(tiny):
    """The sentence against the code: per_channel_dynamic_qconfig quantizes weights per output row (axis 0); the
    activations get one unsigned scale per tensor, with torch's reduced range: 128 levels here."""
    import torch

    from autoreg_core.experiments import precision

    said = text.PRECISION
    assert "activations rounded to int8 at every step with **one scale per tensor**" not in said
    assert ("int8 weights with **one scale per output row**, and at every step each layer's input rounded to "
            "unsigned 8-bit values with **one scale for the whole tensor**, then 8-bit integer products; torch "
            "asks for a reduced range there, so on x86 only 128 of the 256 levels are used") in said
    assert "one scale per tensor (torch's dynamic int8 below) is what collapses" not in said
    model = precision.variant_bundle(tiny, precision.INT8).model
    layers = [m for m in model.modules() if isinstance(m, precision.Int8Linear)]
    assert layers
    for layer in layers:
        weight = layer.weight()
        assert weight.qscheme() == torch.per_channel_affine and weight.q_per_channel_axis() == 0
        assert weight.q_per_channel_scales().numel() == weight.shape[0]  # one scale per output row
    identity = _identity_int8()
    small, big = torch.linspace(0, 0.01, 64), torch.linspace(0, 1, 64)
    alone, together = identity(small[None])[0], identity(torch.stack([small, big]))[0]
    assert torch.unique(alone).numel() == 64 and torch.unique(together).numel() <= 2  # one scale over both rows
    levels = torch.unique(identity(torch.linspace(0, 1, 64 * 50).reshape(50, 64))).numel()
    if torch.backends.quantized.engine in ("x86", "fbgemm"):
        assert levels == 128


def test_the_batched_gap_is_a_measured_maximum_and_the_live_batcher_is_not_continuous_batching():
    assert "under 1e-4" not in text.BATCHED_ROUNDING
    assert ("about 1e-4 at most in the runs measured on the embedded model, on a CPU in float32: "
            "`python -m bench.batch_exactness`") in text.BATCHED_ROUNDING
    assert "continuous batching, happening" not in text.LIVE_INTRO
    assert ("batching, one step at a time, happening to your class. It is not the continuous batching of section 2: "
            "no running batch is kept, each pass gathers whichever steps are waiting.") in text.LIVE_INTRO


def test_bf16s_reason_is_said_to_be_inferred():
    from autoreg_core.experiments import precision

    reason = text.SLOWER_BECAUSE[precision.BF16]
    assert reason.startswith("likely") and "inferred, not measured here" in reason
    assert "this CPU has no fast bfloat16 matrix unit" not in reason


def _spec(draft: str, rounds, *, ms: float, plain_ms: float = 100.0, plain_step: float = 10.0):
    """A plain run of 9 tokens and a speculative run whose tokens are the prefill's plus every round's."""
    from autoreg_core.experiments import speculative_decoding as speculative

    tokens = [0] + [t for r in rounds for t in r.emitted]
    run = speculative.Speculated(tokens=tokens, ms=ms, forward_passes=1 + len(rounds), draft=draft, k=3,
                                 rounds=list(rounds))
    # each pass alone 2 ms faster than the token it gave (its choice): the sentences use the token's time, as rounds
    plain = speculative.Decoded(tokens=list(range(9)), ms=plain_ms, forward_passes=9, step_ms=[plain_step - 2.0] * 8,
                                token_ms=[plain_step] * 8)
    return SimpleNamespace(label="open-ended", plain=plain), run


def _rounds(n: int, kept: int, draft_ms: float, verify_ms: float):
    from autoreg_core.experiments import speculative_decoding as speculative

    return [speculative.Round([1, 2, 3], kept, 9, draft_ms, verify_ms) for _ in range(n)]


def test_a_rounds_tokens_leave_out_the_prefills_token():
    """Two rounds of 4 tokens after the prefill's one: 4.00 per round, not 9 / 2."""
    case, run = _spec("prompt lookup (2-gram)", _rounds(2, 3, 1.0, 12.0), ms=50.0)
    said = speculation_text.speculative_sentence(case, run)
    assert speculation_text.round_tokens(run) == 4.0 and "for 4.00 tokens (the prefill's token not counted)" in said
    assert "3.00 tokens per model pass (the prefill's pass and token included)" in said
    assert "against 10.0 ms per token for plain decoding (its pass and its choice): " in said  # token_ms, not step_ms
    assert said.endswith("**2.00× faster**.")


@pytest.mark.parametrize("draft_ms, verify_ms, reason", [
    (40.0, 1.0, "drafting alone (40.0 ms a round) cost more than plain decoding takes for the 4.00 tokens a round "
                "brought (40.0 ms)"),
    (1.0, 45.0, "the verify pass alone (45.0 ms, 4.5× a plain token's time) cost more than plain decoding takes for "
                "the 4.00 tokens a round brought (40.0 ms): checking the guesses in one pass was far from free on "
                "this machine"),
    (20.0, 25.0, "drafting and verifying together (45.0 ms a round) cost more than plain decoding takes"),
    (20.0, 20.0, "drafting and verifying together (40.0 ms a round) cost more than"),
    (39.8, 0.1, "a round's drafting and verifying (39.9 ms) cost less than plain decoding takes for the 4.00 tokens "
                 "a round brought (40.0 ms), so the time was lost in parts of the run these figures leave out"),
])
def test_a_slower_run_is_explained_by_its_measured_parts(draft_ms, verify_ms, reason):
    """Each cause is a comparison of measured times, on each side of its boundary."""
    case, run = _spec("prompt lookup (2-gram)", _rounds(2, 3, draft_ms, verify_ms), ms=200.0)
    said = speculation_text.speculative_sentence(case, run)
    assert "**0.50×, slower**: " in said and reason in said and said.endswith(".")
    assert "is not waiting on memory" not in said and "too few guesses" not in said


def test_an_early_exit_is_called_weak_only_when_it_kept_few_guesses():
    weak_case, weak = _spec("early exit after layer 24", _rounds(8, 0, 1.0, 30.0), ms=300.0)
    assert weak.acceptance_rate < speculation_text.WEAK_DRAFT
    said = speculation_text.speculative_sentence(weak_case, weak)
    assert "an early exit is a weak draft, keeping few guesses" in said
    strong_case, strong = _spec("early exit after layer 24", _rounds(2, 3, 30.0, 30.0), ms=300.0)
    assert strong.acceptance_rate >= speculation_text.WEAK_DRAFT
    assert "weak draft" not in speculation_text.speculative_sentence(strong_case, strong)
    lookup_case, lookup = _spec("prompt lookup (2-gram)", _rounds(8, 0, 1.0, 30.0), ms=300.0)
    assert "weak draft" not in speculation_text.speculative_sentence(lookup_case, lookup)


def test_a_draft_without_guesses_is_not_blamed_on_a_wide_verify_pass():
    from autoreg_core.experiments import speculative_decoding as speculative

    rounds = [speculative.Round([], 0, 9, 2.0, 11.0) for _ in range(8)]
    case, run = _spec("prompt lookup (2-gram)", rounds, ms=200.0)
    said = speculation_text.speculative_sentence(case, run)
    assert "no guesses found" in said and "checking the guesses" not in said
    assert said.endswith("**0.50×, slower**: the draft found no guesses, so every round was one plain step with the "
                         "search for guesses on top.")


def test_a_run_without_rounds_says_so():
    case, run = _spec("prompt lookup (2-gram)", [], ms=200.0)
    assert speculation_text.speculative_sentence(case, run) == (
        "**prompt lookup (2-gram)** on “open-ended”: no round ran, the prefill's token ended the run; **0.50×** plain "
        "decoding's speed.")
    assert "nan" not in speculation_text.speculative_sentence(case, run)


def _precision_row(variant: str, *, weights: int, step_weights: int, step_ms: float, cache: int = 1000):
    from autoreg_core.experiments import precision

    return precision.PrecisionRow(variant, weights, step_weights, cache, 40, step_ms, [1, 2],
                                  precision.Quality(0.001, 1.0, 10.0, 40))


def test_the_q8_row_stores_its_bytes_and_says_it_also_moves_a_float32_copy():
    """Q8Linear.forward rebuilds a float32 weight at every call: the row says what it stores, not what a step reads,
    and the table gives it no bytes-read or floor figure."""
    from autoreg_core.experiments import precision

    base = _precision_row(precision.FP32, weights=400, step_weights=400, step_ms=10.0)
    for step_ms, slower in ((13.0, True), (9.0, False)):
        q8 = _precision_row(precision.INT8_WEIGHTS, weights=188, step_weights=108, step_ms=step_ms)
        said = text.precision_sentences([base, q8])
        assert len(said) == 1 and said[0].startswith(f"- **{precision.INT8_WEIGHTS}**: {step_ms / 10:.2f}× the time "
                                                     "of a float32 step; it stores 47% of float32's weight bytes; this "
                                                     "build also unpacks every Linear weight into float32 at each step "
                                                     "(writing and reading at least one full float32 copy of it)")
        assert "reads 27%" not in said[0] and "it reads" not in said[0]
        assert ("Slower, because likely that copy" in said[0]) == slower
    int8 = _precision_row(precision.INT8, weights=120, step_weights=108, step_ms=12.0)
    assert "it reads 27% of float32's weight bytes per step" in text.precision_sentences([base, int8])[0]
    assert text.Q8_NO_FLOOR in text.precision_caption(40, 120)


def test_the_precision_guides_say_what_the_page_does():
    notice, try_, ask = text.GUIDES["4 · Precision: fewer bytes per weight"]
    assert try_ == "Run the bit dial and find the width where the top-1 agreement collapses."  # one button, 8 → 2 bits
    assert ask.startswith("Weight-only int8 and dynamic int8 both store about 8 bits per weight (8.5 with Q8_0's "
                          "block scales).")
    assert "8.5 bits per weight" in text.PRECISION  # what the prose says of Q8_0, which the Ask now agrees with


def test_a_tab_alone_is_told_so_from_the_batchers_count_and_offered_requests_of_its_own():
    from autoreg_core.runtime.batcher import ServerNow, Totals

    invite = "Send a few requests of your own and watch the batcher gather their steps into shared passes."
    quiet = ServerNow(0, 0, 60.0, {}, Totals(3, 3, 0), others=0)  # passes since start, none in the last minute
    assert live_text.alone_sentence(quiet) == (
        "No decode step, yours included, went through this model's batcher in the last 60 seconds, so the "
        f"last-minute figures below are zero. {invite}")
    mine = ServerNow(4, 4, 60.0, {1: 4}, Totals(4, 4, 0), others=0)  # only this tab stepped
    assert live_text.alone_sentence(mine) == (
        "None of the other texts open on this model stepped through its batcher in the last 60 seconds (a step that "
        f"captures attention, on the Attention page, runs outside it). {invite}")
    assert live_text.alone_sentence(mine, own_ago=None) == live_text.alone_sentence(mine)
    for others in (1, 5):  # the other side of the boundary: nothing said, nothing offered
        crowded = ServerNow(4, 6, 60.0, {1: 2, 2: 2}, Totals(4, 6, 4), others=others)
        assert live_text.alone_sentence(crowded) is None
        assert live_text.alone_sentence(crowded, own_ago=1.0) is None
        assert serving.offers_own_requests(crowded, batching=True, has_text=True) is False
    assert serving.offers_own_requests(quiet, batching=True, has_text=True) is True
    assert serving.offers_own_requests(mine, batching=True, has_text=True) is True
    assert serving.offers_own_requests(quiet, batching=False, has_text=True) is False  # every step its own pass
    assert serving.offers_own_requests(quiet, batching=True, has_text=False) is False


def test_after_sending_requests_the_alone_note_counts_them_out_and_asks_for_nothing_until_they_leave_the_window():
    from autoreg_core.runtime.batcher import ServerNow, Totals

    after = ServerNow(8, 48, 60.0, {6: 8}, Totals(8, 48, 48), others=0)  # the requests ended: no owner left alive
    apart = ("Apart from your own text and the requests you sent, none of the other texts open on this model "
             "stepped through its batcher in the last 60 seconds.")
    for ago in (0.0, 12.0, 60.0):  # in the window (its edge included)
        assert live_text.alone_sentence(after, own_ago=ago) == apart
    for ago in (60.01, 300.0):  # out of it: the plain note and its invitation again
        assert live_text.alone_sentence(after, own_ago=ago) == live_text.alone_sentence(after)
        assert live_text.alone_sentence(after, own_ago=ago).endswith("shared passes.")
    assert live_text.own_in_window(60.0, 60.0) and not live_text.own_in_window(60.01, 60.0)
    assert not live_text.own_in_window(None, 60.0)


def test_the_own_requests_sentence_reads_what_the_batcher_did_and_when():
    from autoreg_core.experiments.own_requests import OwnRequests

    shared = OwnRequests(tokens=[[1, 2], [3, 4], [5, 6]], rows=[[3, 3], [3, 2], [2, 3]], passes=3, seconds=0.456,
                         started=1000.0)
    assert live_text.own_result(shared, 0.4, 60.0) == (
        "Your 3 requests, sent just now, asked for 6 decode steps in 0.46 s; the batcher ran 3 passes while they did, "
        "and their steps rode in passes of up to 3 rows. The batcher treats each request as a tab of its own, so the "
        "last-minute figures below include their passes.")
    assert "sent 1 s ago," in live_text.own_result(shared, 1.0, 60.0)
    assert "sent 59 s ago," in live_text.own_result(shared, 59.9, 60.0)
    assert live_text.own_result(shared, 60.0, 60.0).endswith("the last-minute figures below include their passes.")
    for ago in (60.01, 60.456):  # begun before the window, but they ran 0.456 s: their last passes are in it
        said = live_text.own_result(shared, ago, 60.0)
        assert said.endswith("They began more than 60 seconds ago, so the last-minute figures below include only "
                             "those of their passes that ended in it.")
    for ago in (60.457, 125.0):  # ended before the window: the panel no longer holds them
        said = live_text.own_result(shared, ago, 60.0)
        assert f"sent {int(ago)} s ago," in said
        assert said.endswith("They ended more than 60 seconds ago, so the last-minute figures below no longer "
                             "include their passes.")
    alone = OwnRequests(tokens=[[1]], rows=[[1]], passes=1, seconds=0.05, started=1000.0)
    assert "the batcher ran 1 pass while they did, and their steps rode in passes of up to 1 row." in \
        live_text.own_result(alone, 2.0, 60.0)
    assert live_text.own_button(serving.OWN_REQUESTS) == f"Send {serving.OWN_REQUESTS} requests of my own at once"
    assert serving.own_prompt(list(range(100))) == list(range(100 - serving.OWN_PROMPT_TOKENS, 100))
    assert serving.own_prompt([7, 8]) == [7, 8]


def test_the_own_requests_help_says_how_much_of_the_text_they_continue_and_the_passes_rows():
    n = serving.OWN_PROMPT_TOKENS
    tail = ("for 8 tokens, from a different one of the model's most likely next tokens after them and then greedily, "
            "as if 6 tabs pressed Next token together: the batcher puts the steps waiting when a pass starts into "
            "shared passes of up to 12 rows each.")
    for length, what in ((n + 1, f"the last {n} tokens of your text"), (100, f"the last {n} tokens of your text"),
                         (n, f"your whole text ({n} tokens)"), (2, "your whole text (2 tokens)"),
                         (1, "your whole text (1 token)")):
        ids = list(range(length))
        assert live_text.own_help(6, 8, len(serving.own_prompt(ids)), len(ids), 12) == (
            f"6 requests each continue {what} {tail}")
    assert "up to 4 rows each." in live_text.own_help(6, 8, n, 100, 4)


def test_the_tabs_own_requests_are_kept_per_model():
    from autoreg_ui.lessons.serving import keys

    state = {keys.SRV_OWN_KEPT: ("model-a", "what the batcher did")}
    assert serving.kept_own(state, "model-a") == "what the batcher did"
    assert serving.kept_own(state, "model-b") is None
    assert serving.kept_own({}, "model-a") is None
