"""The "Under the hood" sentences: each picks its words from the numbers it is given, on both sides of every
boundary."""
from __future__ import annotations

import math

from autoreg_ui.lessons.hood import positions_text, text


def test_loss_sentence_says_terms_loss_and_perplexity():
    said = text.loss_sentence(17, 2.418, 11.2, 13)
    assert "**16** next-token terms" in said and "**2.418 nats**" in said and "**11.2**" in said
    assert "at 13 of the 16 positions" in said


def test_parts_sentence_both_directions_and_the_empty_cases():
    lower = text.parts_sentence(6.455, 1.073, 12, 1, 3)
    assert "The 12 tokens added after the prompt have a mean loss of **1.073 nats**, lower than the prompt's " \
           "**6.455**." in lower
    assert "8 of the 12 were the model's own top token (1 forced and 3 sampled below the model's top token)" in lower
    assert "All 8 were the model's own top token: text the model picks itself" in text.parts_sentence(6.455, 1.073, 8)
    assert "7 of the 8 were the model's own top token (1 sampled below" in text.parts_sentence(6.455, 1.073, 8, 0, 1)
    assert "higher than the prompt's **1.000**" in text.parts_sentence(1.0, 2.0, 3)
    assert text.parts_sentence(1.0, 1.0, 3).endswith("**1.000 nats**, the same as the prompt's **1.000**.")
    assert text.parts_sentence(2.0, math.nan, 0).startswith("Nothing generated yet")
    assert text.parts_sentence(math.nan, 1.5, 4).startswith("The prompt is one token")


def test_a_higher_generated_loss_names_only_causes_its_records_show():
    """Greedy and nothing forced: no sampling or forcing to blame (seen: a list prompt, generated 1.491 vs 1.076)."""
    greedy = text.parts_sentence(1.076, 1.491, 12)
    assert "Sampling" not in greedy and "forced" not in greedy
    assert ("Each was the model's own top token, yet their geometric-mean probability is only e^(−1.491) = 0.225: "
            "the model hesitated at those steps") in greedy and "(a list, a well-known passage)" in greedy
    forced = text.parts_sentence(1.076, 1.491, 12, forced=2)
    assert "Here the added tokens surprise the model more than the prompt did: 2 forced, which adds" in forced
    assert "sampled below" not in forced and "Each was" not in forced
    sampled = text.parts_sentence(1.076, 1.491, 12, below=5)
    assert "did: 5 sampled below the model's top token, which adds surprise" in sampled and "forced" not in sampled
    both = text.parts_sentence(1.076, 1.491, 12, 1, 5)
    assert "1 forced and 5 sampled below the model's top token" in both


def test_a_prompt_that_fills_the_pass_is_not_called_nothing_generated():
    """A prompt of 512 tokens or more: generating cannot give the one pass a generated term."""
    said = "The prompt fills the 512 tokens one pass reads here, so no generated token is scored."
    assert text.parts_sentence(2.0, math.nan, 0, filled=512) == said
    assert text.records_sentence(0.0, 0, 0, filled=512) == said
    assert text.parts_sentence(2.0, math.nan, 0, filled=0).startswith("Nothing generated yet")
    assert text.records_sentence(0.0, 0, 0, filled=0).startswith("No generated token")


def test_records_sentence_agrees_only_below_the_tolerance():
    assert "equals −(the log-prob the step recorded) to **2.0e-05" in text.records_sentence(2e-5, 12, 0)
    assert "equals" in text.records_sentence(9.99e-5, 12, 3)  # shared passes that still agree: no cause to name
    assert "differ by up to **1.0e-04 nats**, more than 1e-04" in text.records_sentence(text.AGREE, 12, 0)
    assert "differ by up to" in text.records_sentence(0.5, 12, 3)
    assert text.records_sentence(0.0, 0, 0).startswith("No generated token")


def test_a_records_gap_names_only_a_cause_the_code_can_produce():
    """The result is stamped with the text, so the text cannot have changed: the cause is how the logits were
    computed, a shared pass when the records show one, else the two ways of computing them."""
    for shared in (0, 1, 5):
        said = text.records_sentence(2e-4, 12, shared)
        assert "text has changed" not in said and "The tokens are the same" in said
    shared = text.records_sentence(2e-4, 12, 5)
    assert "5 of these steps chose from logits of a decode pass that also carried other tabs' steps" in shared
    assert "No step here is recorded as sharing" not in shared
    alone = text.records_sentence(2e-4, 12, 0)
    assert "No step here is recorded as sharing its pass" in alone and "one pass over the whole text" in alone
    assert "other tabs' steps" not in alone


def test_the_loss_prose_says_what_a_mean_and_a_causal_mask_do():
    assert "each position see only itself and the text before it" in text.LOSS_EXPLAIN
    assert "**geometric mean** of those probabilities: each extra nat divides that mean by e" in text.NATS
    assert "divides that probability by e" not in text.NATS


def test_the_rope_prose_says_what_rotary_adds_beyond_the_causal_mask():
    assert "Attention itself has no notion of order" not in text.ROPE_EXPLAIN
    assert "The causal mask already breaks that symmetry" in text.ROPE_EXPLAIN
    assert "(Haviv et al., 2022)" in text.ROPE_EXPLAIN
    assert "Rotary embeddings put the distance between two tokens into every score directly" in text.ROPE_EXPLAIN


def test_rope_positions_and_angles_sentences():
    assert "`rope_theta` = 100,000, head dimension d = 64, so 32 pairs" in text.rope_sentence(1e5, 64, "default")
    assert "rescaled" in text.rope_sentence(5e5, 128, "llama3")
    assert "rescaled" not in text.rope_sentence(1, 2, "default")
    said = text.positions_sentence(5, 17)
    assert "positions 0 … 4" in said and "uses position **17**" in said
    assert "17.00 rad (2.71 full turns)" in text.angles_sentence(17, 17.0, 2.44e-4, 32)
    assert "pair 31 by 2.44e-04 rad" in text.angles_sentence(17, 17.0, 2.44e-4, 32)


def test_key_sentence_equal_or_not():
    same = text.key_sentence(2.4e-6, 1.92, 3.68, 3, 0)
    assert "equals the cache entry to **2.4e-06**" in same and "1.92 away" in same and "3.68" in same
    assert "differs from the cache entry by **1.0e-04**" in text.key_sentence(text.AGREE, 1.9, 3.7, 3, 0)


def test_shift_sentence_top_changed_or_not_and_the_whole_shift():
    kept = text.shift_sentence(1, 1.31, 0.0639, False, 3.4e-5, 4.6e-12)
    assert "up to **1.31**" in kept and "the top token stays the same" in kept and "changes almost nothing" in kept
    moved = text.shift_sentence(1, 17.2, 0.98, True, 1e-3, 1e-6)
    assert "the top token **changes**" in moved and "changes a little too" in moved
    assert "changes almost nothing" in text.shift_sentence(1, 1, 1, True, 9.9e-4, 0)


def test_pad_sentence_positions_and_both_readings():
    said = text.pad_sentence([17, 33], 33, 1e-5, 12.5, True)
    assert "16 pad columns" in said and "position **17**" in said and "sit at 33, 16 positions too far" in said
    assert "17 real tokens cached" in said and "without its last token" in said and "feeds your last token" in said
    assert "17 real tokens," not in said and "next token" not in said  # the count is of cached tokens, not the text
    assert "the same as alone" in said and "its top token changes" in said
    other = text.pad_sentence([17, 33], 33, 1e-3, 0.5, False)
    assert "close to alone" in other and "top token happens to stay" in other


def test_flip_sentence_on_both_sides_of_twice_the_difference():
    assert "could swap" in text.flip_sentence(2e-4, 1e-4)
    assert "could swap" not in text.flip_sentence(2.0001e-4, 1e-4)
    within = text.flip_sentence(2e-4, 1e-4)
    assert within.startswith("None of the shared passes measured here changed the greedy token, but the gap")
    assert "which batch this step lands in can change" not in within


def test_flip_sentence_says_a_flip_only_when_a_measured_pass_flipped():
    one = text.flip_sentence(1e-5, 3e-5, [4])
    assert one.startswith("The 4-row pass picked a top token other than the solo pass's (gap 1.00e-05")
    assert "changes its greedy token" in one
    assert text.flip_sentence(1e-5, 3e-5, [2, 8]).startswith("The 2, 8-row passes picked")
    for gap, delta in ((1e-5, 3e-5), (0.0, 0.0), (2.0, 1e-4)):
        assert "picked a top token other" not in text.flip_sentence(gap, delta, [])
    assert text.flip_sentence(0.0, 0.0, []).startswith("The shared passes measured here gave exactly")
    far = text.flip_sentence(2.0, 1e-4)
    assert "**2.0e-04**" in far and "10,000× further apart" in far
    assert text.flip_sentence(0.5, 0.0).startswith("The shared passes measured here gave exactly")
    for gap, delta in ((2.0, 1e-4), (0.5, 0.0)):  # measured on a few companions: never "no batch" of any kind
        said = text.flip_sentence(gap, delta)
        assert "no batch" not in said and "none of " in said and "measured here" in said


def test_the_api_sentence_says_which_machine_measured_and_what_servers_do():
    cpu = text.machine_label("cpu", "float32")
    assert cpu == "CPU, float32" and text.machine_label("cuda:0", "bfloat16") == "GPU, bfloat16"
    assert "here (CPU, float32) the shared passes measured gave exactly the solo logits" in text.api_sentence(
        0.0, 1.0, cpu)
    wide = text.api_sentence(1e-4, 2.0, cpu)
    assert ("moved them by up to 1.0e-04, and this step's gap (2) is wider than twice that, so its greedy token "
            "stayed") in wide
    assert "is within twice that, so its greedy token could go either way" in text.api_sentence(1e-4, 2e-4, cpu)
    assert "is wider" in text.api_sentence(1e-4, 2.001e-4, cpu)
    for said in (wide, text.api_sentence(0.0, 1.0, cpu)):
        assert "move by about" not in said  # this machine's figure is not said of an API's server
        assert "Thinking Machines (2025) sent one prompt to Qwen3-235B 1,000 times at temperature 0 and got 80 " \
               "different completions" in said and "8 significant bits where float32 keeps 24" in said


def test_batch_and_search_sentences():
    said = text.batch_sentence("step 3 (the one that chose its token)", 6.1e-5, 2.57, [2, 4, 8])
    assert "2, 4, 8-row passes" in said and "**6.1e-05**" in said and "**2.57** apart" in said
    assert "(bit for bit the same)" in text.batch_sentence("x", 0.0, 1.0, [2])
    none = text.search_none(6, 48, 144, False, 0.016, 9e-5)
    assert "Searched 6 texts, 48 greedy steps, 144 shared passes." in none and "1.60e-02 apart" in none
    assert "stopped" not in none and "It stopped" in text.search_none(3, 20, 60, True, math.inf, 1e-4)
    assert "closest" not in text.search_none(0, 0, 0, True, math.inf, 0.0)
    found = text.search_found(4, "a", "b", 1e-5, 3e-5, "x y")
    assert "a 4-row pass picks “b”" in found and "1.00e-05 apart" in found
    assert "2, 4 and 8 rows" in text.search_bounds(6, 8, 48, 90, (2, 4, 8)) and "of 2 rows" in text.search_bounds(
        6, 8, 48, 90, (2,))
    assert text.step_label(False, 0).startswith("the next step")
    assert text.step_label(True, 3) == "step 3 (the one that chose its token)"


def test_a_step_past_one_pass_is_named_as_recomputed_in_label_question_and_answer():
    """On a text over 512 tokens section 3 re-runs the last 512 from position 0: not the step that chose the token,
    and its gap is not the recorded one."""
    assert text.step_label(True, 5, 512) == "step 5, recomputed on its last 512 tokens read as a text of their own"
    assert "the one that chose" not in text.step_label(True, 5, 512)
    assert text.step_label(False, 0, 512).startswith("the next step (nothing generated yet), recomputed on")
    assert text.step_question(True, 0, 0.579) == "Your last step's top two logits are 0.579 apart."
    cut = text.step_question(True, 512, 0.579)
    assert "0.579" not in cut and "recomputed on its last 512 tokens read as a text of their own" in cut
    assert text.step_question(False, 0, math.nan) == "Nothing is generated yet, so this is about the next step."
    assert text.flip_answer(0.341, 512, "S.") == ("Computed now on its last 512 tokens, read as a text of their own: "
                                                  "its top two logits are **0.341** apart. S.")
    assert text.flip_answer(0.341, 0, "S.") == "Computed now: its top two logits are **0.341** apart. S."


def test_a_large_solo_vs_shared_difference_is_read_by_the_precision():
    bf16 = text.diff_large("bfloat16", 8, 20.3, 0.125, 0.344)
    assert bf16.startswith("In bfloat16, which keeps 8 significant bits, neighbouring numbers near logits this size "
                           "(the top one is 20.3) are 0.125 apart, so the difference is 2.8 of those steps")
    assert "look" not in bf16
    assert "In float16, which keeps 11" in text.diff_large("float16", 11, 20.3, 0.0156, 0.01)
    assert text.diff_large("float32", 24, 20.3, 1.9e-6, 2e-3) == text.DIFF_FLOAT32
    assert "about 1e-4 at most" in text.DIFF_FLOAT32 and "busy machine" not in text.DIFF_FLOAT32


def test_section_two_names_its_cut_only_past_one_pass():
    assert text.cut_note(40, 40) == "" and text.cut_note(512, 512) == ""
    assert text.cut_note(512, 513) == ("On the last 512 tokens, read as a text of their own (positions 0 … 511): "
                                       "one pass reads at most 512 here.")


def test_the_intro_does_not_say_a_pass_computes_a_loss():
    assert text.INTRO.startswith("Three things behind every pass that no step shows")
    assert "the model does on every pass" not in text.INTRO


def test_the_position_check_says_which_tokens_it_ran_on():
    whole = positions_text.position_check(40, 40, 1.31, 0.0639, False)
    assert whole == ("Checked on the step that fed the last token at 39: fed one position later instead, its logits "
                     "move by up to 1.31 (KL 0.0639 bits, top token unchanged).")
    cut = positions_text.position_check(512, 600, 2.0, 1.0, True)
    assert "the last 512 tokens (as many as one pass reads here), read as a text of their own" in cut
    assert "their last token at 511" in cut and "top token changed" in cut
    assert text.text_part(40, 40, "first") == "this text"
    assert text.text_part(512, 600, "last") == "this text's last 512 tokens (as many as one pass reads here)"
    assert text.sizes_list((2, 4, 8)) == "2, 4 and 8" and text.sizes_list((2,)) == "2"


def test_the_questions_choices_on_both_sides_of_each_boundary():
    from autoreg_ui.lessons.hood import questions as q

    assert [q.parts_choice(6.0, 1.0), q.parts_choice(1.0, 6.0), q.parts_choice(1.0, 1.1), q.parts_choice(1.0, 1.1001),
            q.parts_choice(1.1001, 1.0)] == [0, 1, 2, 1, 0]
    assert [q.perplexity_choice(p) for p in (9.99, 10.0, 100.0, 100.01)] == [0, 1, 1, 2]
    assert [q.diff_choice(d) for d in (0.0, 1e-9, 9.99e-4, 1e-3)] == [0, 1, 1, 2]
    assert [q.diff_choice(d) // 2 for d in (0.0, 9.99e-4, 1e-3)] == [0, 0, 1]  # the whole-shift question's two


def test_could_flip_is_a_gap_within_twice_the_difference():
    from autoreg_core.experiments.batch_invariance import SizeResult, StepInvariance

    def step(gap, delta, top=1):
        return StepInvariance(1, 2, gap, [SizeResult(2, delta, top)])
    assert step(2e-4, 1e-4).could_flip and not step(2.0001e-4, 1e-4).could_flip
    assert step(0.0, 0.0).could_flip and not step(1e-9, 0.0).could_flip
    assert step(1.0, 0.0, top=2).flipped and not step(1.0, 0.0).flipped
