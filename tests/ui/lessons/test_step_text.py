"""The step page's prose: the corrected statements about passes, exposure bias and look-ahead."""
from autoreg_ui.lessons.step import text as step_text


def test_passes_are_one_prefill_plus_one_decode_per_token():
    text = step_text.around_the_loop(7, "float32")
    assert "7 tokens took one prefill pass plus 7 decode" in text
    assert "took 7 forward" not in text


def test_forcing_simulates_exposure_bias_rather_than_being_it():
    text = step_text.around_the_loop(1, "float32")
    assert "*simulates*" in text and "this is **exposure bias**" not in text
    assert "does not plan" not in text  # hidden states do carry information about later tokens


def test_the_dtype_reaches_the_quantization_sentence():
    assert "dequantized to bfloat16 when loaded" in step_text.around_the_loop(2, "bfloat16")


def test_speeds_quote_this_machines_last_step_next_to_the_published_ones():
    text = step_text.around_the_loop(3, "float32", 40.0)
    assert "the last step took 40 ms, about 25 tokens per second" in text
    assert "Artificial Analysis" in text and "Brysbaert" in text
    assert "Step once to see this machine's figure." in step_text.around_the_loop(0, "float32")


def test_the_pass_note_says_whether_the_step_rode_alone_or_with_others():
    assert step_text.pass_note(35.4, 1) == "This step's forward pass: 35 ms, for this tab alone."
    assert step_text.pass_note(140.0, 12).startswith("This step's forward pass: 140 ms, shared with 11 other tabs ")
    assert "shared with 1 other tab that" in step_text.pass_note(80.0, 2)


def test_the_generate_note_tells_max_length_from_max_new_tokens_and_names_stop_strings():
    said = step_text.GENERATE_CALL
    assert ("`max_new_tokens` counts only the tokens generated; the older `max_length` counts the prompt too, so a "
            "long prompt leaves it less room.") in said
    assert "The sidebar's stop sequences are generate's `stop_strings` (it needs the tokenizer to find them)." in said


def test_the_generate_code_matches_the_page_up_to_batched_rounding():
    for said in (step_text.GENERATE_CALL, step_text.LOOP_CODE):
        assert "exactly the tokens" not in said
    assert ("this code produces the tokens you get here by clicking **Next token** (a test checks it), unless "
            "rounding tips a near-tie: when other tabs step at the same moment, this server runs their steps and "
            "yours as one batch, and batched logits differ from solo ones by under 1e-4.") in step_text.GENERATE_CALL


def test_the_metric_help_reads_perplexity_as_surprise_and_entropy_as_hesitation():
    assert "fair choice" not in step_text.PERPLEXITY_HELP
    assert "For greedy text it understates the model's uncertainty" in step_text.PERPLEXITY_HELP
    assert step_text.ENTROPY_HELP.endswith("its hesitation, in bits.")
    assert "carried their rows too" in step_text.LAST_STEP_HELP
