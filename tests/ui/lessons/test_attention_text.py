"""What the attention page says, with this model's and this session's numbers."""
from autoreg_core.engine.kv_cache import PhaseTimes, worked_example
from autoreg_core.engine.model_spec import PRESETS
from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.attention import text


def test_sentences_carry_the_numbers_they_name():
    assert "**12** weights" in text.weights_text(64, 12) and "$12\\times64$" in text.weights_text(64, 12)
    assert "the last prompt token, before any step" in text.query_text(4, "`x`", 0, "Layer 1, head 0")
    assert text.query_text(9, "`x`", 3, "Layer 1, head 0") == ("Query: position **9** `x`, the token of decode "
                                                              "step 3. Layer 1, head 0.")
    assert text.bar_title("Layer 1, head 0", 9) == ("Layer 1, head 0<br>The weights that the query at position 9 gave "
                                                   "the keys at positions 0 to 9, its own included.")
    assert text.last_rows_caption(300, 256, 44).endswith("(positions 44–299) so the page stays light.")
    assert text.cache_check(10, 10, 2.0) == (True, "Equal, byte for byte: 10 B. Each new token adds 2 B.")
    assert text.cache_check(9, 10, 2.0)[0] is False


def test_gqa_and_the_worked_example_use_the_model_spec():
    spec = PRESETS["70B model with GQA, 128K context"]
    said = text.gqa_text("M", spec, spec.n_heads // spec.n_kv_heads, 40)
    ratio = spec.without_gqa().cache_bytes(40) / spec.cache_bytes(40)
    assert f"**{spec.n_kv_heads} K/V heads**" in said and f"**{ratio:g}× more**" in said
    ex = worked_example(spec)
    assert f"**{human_bytes(ex.at_end)}** ({ex.at_end:,} bytes)." in text.worked_example_text(ex, "M", "bfloat16")
    assert human_bytes(spec.cache_bytes()) in text.long_context_caption(spec)


def _times(prefill_ms_per_token: float, decode_ms: float) -> PhaseTimes:
    return PhaseTimes(prefill_tokens=20, prefill_ms=20 * prefill_ms_per_token,
                      prefill_ms_per_token=prefill_ms_per_token, decode_steps=5, decode_ms_median=decode_ms)


def test_phase_text_reads_what_bounds_each_phase_from_the_measured_ratio():
    shared, even, odd = _times(2.0, 10.0), _times(10.0, 12.0), _times(30.0, 10.0)  # ratios 5, 1.2, 1/3
    said = [text.phase_text(t) for t in (shared, even, odd)]
    assert "**2.00 ms per token**" in said[0] and "5.0× the prefill cost per token" in said[0]
    assert ("Decode step: **10.00 ms** (median of 5 forward passes this tab ran alone, none shared with other tabs' "
            "steps), 5.0× the prefill cost per token.") in said[0]
    assert "all $t + 1$ positions $0 … t$, its own included" in text.DECODE_STEP_INTRO
    assert [s.split("\n\n")[1] for s in said] == [
        "The prefill pushes many tokens through each weight matrix at once; a decode step reads every weight and the "
        "whole cache to produce one token. " + text.phase_reading(r) for r in (5.0, 1.2, 1 / 3)]
    assert len({text.phase_reading(r) for r in (5.0, 1.2, 1 / 3)}) == 3  # three measurements, three readings
    assert "5.0× less than a decode step" in said[0] and "pattern of a memory-bound decode step" in said[0]
    assert "about as much as a decode step (1.2×)" in said[1] and "neither phase is clearly memory-bound" in said[1]
    assert "more than a whole decode step (3.0×)" in said[2] and "memory-bound" not in said[2]
    assert all("(compute-bound)" not in s for s in said)  # no label printed whatever was measured
    assert text.phase_reading(float("nan")) == "Take a decode step to compare."


def test_recompute_sentence_and_rows_carry_the_check_numbers():
    from autoreg_core.experiments.kv_exactness import RecomputeCheck
    from autoreg_ui.lessons.attention import text

    check = RecomputeCheck(positions=12, layers=3, per_layer=(1e-6, 4e-6, 2e-6), compared=(12, 12, 12),
                           largest_value=8.0, dtype="float32")
    sentence = text.recompute_text(check)
    assert sentence.startswith("Recomputed 12 positions × 3 layers in one pass without the cache. Largest")
    assert "difference from the cached keys and values: 4e-06, on values up to 8 (a relative 5e-07)" in sentence
    assert text.recompute_rows(check) == [
        {"layer": 0, "positions compared": 12, "largest |cached − recomputed|": 1e-6},
        {"layer": 1, "positions compared": 12, "largest |cached − recomputed|": 4e-6},
        {"layer": 2, "positions compared": 12, "largest |cached − recomputed|": 2e-6}]


def test_the_recompute_sentence_says_which_positions_each_layer_compared():
    from autoreg_core.experiments.kv_exactness import RecomputeCheck
    from autoreg_ui.lessons.attention import text

    def said(positions, compared):
        return text.recompute_compared(RecomputeCheck(positions=positions, layers=len(compared),
                                                      per_layer=(1e-6,) * len(compared), compared=compared,
                                                      largest_value=1.0, dtype="float32"))

    assert said(7, (7, 7)) == "Recomputed 7 positions × 2 layers in one pass without the cache."  # window not full
    sliding = said(54, (7, 7))  # every layer slides and keeps its last 7
    assert sliding == ("Recomputed 54 positions in one pass without the cache and compared what each layer's cache "
                       "holds: the last 7 (positions 47 … 53) in 2 sliding layers, which keep only those.")
    mixed = said(54, (7, 54))  # Gemma 2: alternate layers slide
    assert mixed == ("Recomputed 54 positions in one pass without the cache and compared what each layer's cache "
                     "holds: all 54 positions in 1 layer and the last 7 (positions 47 … 53) in 1 sliding layer, "
                     "which keeps only those.")
    assert "54 positions × 2 layers" not in sliding + mixed
    assert "(position 9)" in said(10, (1, 1))


def test_the_calculator_warns_past_a_models_context_and_counts_4_bit_scales():
    from dataclasses import replace

    from autoreg_core.engine.model_spec import PRECISIONS, PRESETS, Q4_1_BYTES

    gpt2 = PRESETS["GPT-2 Small"]
    assert text.beyond_context(gpt2) is None
    warning = text.beyond_context(replace(gpt2, seq_len=1_048_576))
    assert warning.startswith("GPT-2 Small reads at most 1,024 tokens (its context length); 1,048,576 is beyond it.")
    assert Q4_1_BYTES == 0.625 and 0.5 not in PRECISIONS.values()  # 4 bits of value + 1 bit of scales per weight
    four_bit = gpt2.with_precision(weight_bytes=Q4_1_BYTES)
    assert four_bit.weight_bytes == round(gpt2.n_params * 5 / 8)
    assert "5 bits each" in text.weights_help(four_bit) and "bits each" not in text.weights_help(gpt2)


def test_the_worked_example_says_why_its_cache_ends_at_150_and_the_count_at_149():
    from autoreg_core.engine.kv_cache import positions_processed
    from autoreg_ui.lessons.inside import text as inside_text

    ex = worked_example(PRESETS["GPT-2 Small"], 50, 100)
    assert "That is 150 and not 149 because this app feeds every chosen token in" in text.worked_example_text(
        ex, "GPT-2 Small", "float16")
    assert positions_processed(50, 100, cached=True) == 149
    assert "the cache ends at 149 positions. (The Attention page's cache holds 150" in inside_text.WORKED_COUNTING


def test_the_recompute_reading_follows_the_difference_on_each_side_of_zero_and_of_rounding():
    from autoreg_core.experiments.kv_exactness import RecomputeCheck
    from autoreg_ui.lessons.attention import text

    def said(diff, dtype="float32"):
        return text.recompute_text(RecomputeCheck(positions=5, layers=2, per_layer=(0.0, diff), compared=(5, 5),
                                                  largest_value=1.0, dtype=dtype))

    identical = ("They are identical, bit for bit: the cache holds exactly what this one pass over the same tokens "
                 "computes, as it does when the prefill alone filled it.")
    rounding = ("That is floating-point rounding (up to 7.6e-06 relative, 64 times float32's machine epsilon): the "
                "passes that filled the cache and this one add the same numbers in a different order, not a "
                "different result.")
    larger = ("That is larger than rounding (up to 7.6e-06 relative, 64 times float32's machine epsilon): the cache "
              "does not hold the same keys and values as a fresh pass over these tokens.")
    bound = 64 * 2.0 ** -23  # float32's machine epsilon
    assert said(0.0).endswith(identical)
    for diff in (1e-12, 1e-7, bound):  # above zero, up to the bound (its edge included)
        assert said(diff).endswith(rounding) and identical not in said(diff)
    for diff in (bound * 1.01, 1e-4, 0.5):  # past it
        assert said(diff).endswith(larger) and "That is floating-point rounding" not in said(diff)
    assert said(0.1, "bfloat16").endswith("That is floating-point rounding (up to 0.12 relative, 16 times "
                                         "bfloat16's machine epsilon): the passes that filled the cache and this one "
                                         "add the same numbers in a different order, not a different result.")
    assert "larger than rounding" in said(0.126, "bfloat16") and "rounding (up" in said(0.124, "bfloat16")
    # a relative just past the bound never prints as the bound itself
    assert "a relative 7.7e-06" in said(7.7e-6) and "larger than rounding" in said(7.7e-6)
    just_past = said(7.64e-6)
    assert "a relative 7.64e-06" in just_past and "up to 7.63e-06 relative" in just_past
    assert "a relative 0.0162" in said(0.0162, "float16") and "up to 0.0156 relative" in said(0.0162, "float16")
