"""What the "Inside generation" page says, with the measured numbers."""
from autoreg_core.experiments.prefill_decode import PrefillPoint
from autoreg_core.experiments.teacher_forcing import MAX_TOKENS
from autoreg_ui.lessons.inside import text


def test_sentences_carry_their_numbers():
    assert str(MAX_TOKENS) in text.CUT_SHORT
    assert text.force_label(25) == "Force the model's rank-25 token as the next one"
    assert text.exposure_bias(4).startswith("**A simulated mistake.** Step 4 was forced:")
    assert text.lens_step_label(6) == "Step to read (7 = the next token, not chosen yet)"
    assert text.phases_spinner(300, 32) == "Prefill of 300 tokens, then 31 decode steps…"
    assert text.sweep_label([8, 16, 32]) == "Sweep the prefill over L = 8, 16, 32"
    assert text.sweep_stopped(2, 5) == "Stopped: 2 of 5 lengths measured."
    said = text.sweep_sentence(PrefillPoint(length=64, prefill_ms=32.0, decode_ms=12.0))
    assert said.startswith("At L = 64, one decode step costs as much as **") and "(12.0 ms vs 0.50 ms)" in said
    assert text.window_captions(16)[1] == "Sliding window, W = 16"


def test_the_worked_example_is_worded_from_its_numbers():
    assert text.WORKED_TITLE == "The worked example: a 50-token prompt and 100 new tokens"
    assert "(50 + 51 + … + 149 positions)" in text.WORKED_COUNTING and "the 100th token" in text.WORKED_COUNTING
    assert text.WORKED_SPINNER == "50-token prefill, then 99 decode steps…"


def test_forcing_a_token_simulates_the_mistake_exposure_bias_is_about_rather_than_showing_it():
    assert "to see exposure bias" not in text.FORCE_SOMETHING
    assert text.FORCE_SOMETHING.endswith("the kind of mistake exposure bias is about.")
    said = text.exposure_bias(3)
    assert "**Exposure bias** is the gap this probes: in training every prefix is real text" in said


def test_time_to_first_token_means_one_thing_on_every_page_that_says_it():
    from autoreg_ui import glossary_text

    assert text.TTFT_MEANS == ("from the request's arrival to its first new token: any wait in a queue, then the "
                               "prefill over the whole prompt, then choosing the first token")
    assert (f"(TTFT, {text.TTFT_MEANS}; here no queue on this page, so the prefill and the choice)"
            in text.PREFILL_VS_DECODE)
    assert text.TTFT_MEANS in text.GUIDES["3 · Prefill vs decode, in the units people quote"][0]
    assert text.TTFT_MEANS is glossary_text.TTFT_MEANS  # one definition, kept with the glossary
    assert glossary_text.term_named("Time to first token").meaning == (
        "From the request's arrival to its first new token: any wait in a queue, then the prefill over the whole "
        "prompt, then choosing the first token.")
    from autoreg_ui.lessons.serving import text as serving_text
    assert serving_text.TTFT_PARTS == "waiting for a row, then its prefill, then the first choice"


def test_when_the_cache_runs_out_servers_queue_or_preempt_they_do_not_drop_positions():
    said = text.CACHE_RUNS_OUT
    assert "**bound** each request's cache by **evicting**" not in said
    assert "it does not drop positions" in said and "is for models trained with one" in said
    assert "StreamingLLM keeps those first tokens beside the window. llama.cpp's context shift" in said
    assert "and so does llama.cpp" not in said  # a different rule: a setting meant for a system prompt, half dropped
    assert ("keeps the first `--keep` tokens, a setting meant for a system prompt (0 by default, plus the BOS token "
            "when prompts begin with one), and drops, by default, the older half of the rest at once") in said
    assert "no request reserves room for its maximum length, and requests with a common prefix share its blocks" in said
    # what limits each phase is measured by the sweep, not stated before it
    assert "limited by arithmetic" not in text.PREFILL_VS_DECODE and "far cheaper" not in text.PREFILL_VS_DECODE


def test_the_lens_answer_in_every_state_the_reading_can_be_in():
    layers = 30
    never = text.lens_answer(None, None, layers, 7)
    assert never.startswith("**Never**: the lens ranks it first at no layer, not even after the last (rank 7 there)")
    assert "stays" not in never
    end = text.lens_answer(30, 30, layers, 1)
    assert end.startswith("**Only at the very end**: after layer 30 of 30")
    dropped = text.lens_answer(12, None, layers, 2)
    assert dropped.startswith("First ranked top in **the middle third** (after layer 12 of 30), but not after the "
                              "last layer (rank 2 there)")
    assert "stays" not in dropped
    early = text.lens_answer(0, 0, layers, 1)
    assert early.startswith("First ranked top in **the first third** (in the embedding, before any layer), and it "
                            "stays top from the embedding on.") and text.LENS_EARLY in early
    middle = text.lens_answer(11, 14, layers, 1)
    assert middle == ("First ranked top in **the middle third** (after layer 11 of 30), and it stays top from "
                      "layer 14 on.")
    assert text.LENS_LATE in text.lens_answer(25, 25, layers, 1)
    assert [text.lens_third(f, layers) for f in (0, 1, 10, 11, 20, 21, 29)] == [0, 0, 0, 1, 1, 2, 2]


def test_the_passes_and_phases_readings_on_each_side():
    assert text.passes_why(0.0, 0).startswith("Bit for bit the same here")
    alone = text.passes_why(2e-6, 0)
    assert alone.startswith("Not bit for bit: the same model computes the same formulas, but one pass over the whole "
                            "text multiplies in other shapes than the prefill and the one-token steps on the cache")
    assert "shared" not in alone and "same arithmetic" not in alone
    assert "; and 3 of the steps chose from logits of a decode pass shared" in text.passes_why(2e-6, 3)
    assert text.phases_left_out(0) == ""
    assert text.phases_left_out(2) == "; 2 that shared a pass with other tabs' steps are left out"
    assert "same arithmetic" not in text.INSIDE_PASSES[2]


def test_the_page_lens_summary_does_not_say_stays_on_top_when_it_does_not(tiny):
    from autoreg_core.experiments.logit_lens import LensReading

    dropped = LensReading(3, 5, None, None, [0.1, 0.5, 0.2], [3, 1, 2])  # top after layer 1, rank 2 at the end
    said = text.lens_summary(tiny.tokenizer, dropped)
    assert "is first the top guess after layer 1, but not after the last layer (its rank there: 2)" in said
    assert "stays" not in said and "None" not in said
    kept = LensReading(3, 5, None, None, [0.1, 0.5, 0.6], [3, 1, 1])
    assert "stays on top from layer 1 of 2 on" in text.lens_summary(tiny.tokenizer, kept)
    assert "is never the top guess" in text.lens_summary(tiny.tokenizer, LensReading(3, 5, None, None, [0.1], [2]))


def test_the_largest_gap_help_does_not_say_both_ways_compute_the_same_numbers():
    assert "same numbers" not in text.LARGEST_GAP_HELP
    assert "not necessarily bit for bit" in text.LARGEST_GAP_HELP and "another order" in text.LARGEST_GAP_HELP
