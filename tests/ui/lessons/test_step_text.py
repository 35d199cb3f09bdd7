"""The step page's prose: the corrected statements about passes, exposure bias and look-ahead."""
import torch

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
    assert "batching" not in step_text.pass_note(35.4, 1)
    assert step_text.pass_note(140.0, 12).startswith("This step's forward pass: 140 ms, shared with 11 other tabs ")
    assert "shared with 1 other tab that" in step_text.pass_note(80.0, 2)


def test_a_shared_pass_is_batching_one_step_at_a_time_not_continuous_batching():
    """The batcher gathers whichever steps are waiting into one pass; it keeps no running batch."""
    said = step_text.pass_note(80.0, 2)
    assert "(continuous batching" not in said and "continuous batching, as on" not in said
    assert ("That is batching one step at a time (each pass gathers whichever steps are waiting), not the continuous "
            "batching of the *How servers go fast* page, where a server keeps one running batch that requests join "
            "and leave between steps.") in said


def test_the_generate_note_tells_max_length_from_max_new_tokens_and_names_stop_strings():
    said = step_text.generate_call("cpu")
    assert ("`max_new_tokens` counts only the tokens generated; the older `max_length` counts the prompt too, so a "
            "long prompt leaves it less room.") in said
    assert "The sidebar's stop sequences are generate's `stop_strings` (it needs the tokenizer to find them)." in said


def test_the_batched_gap_is_a_measured_maximum_not_a_bound():
    """bench.batch_exactness measured 8.6e-5 and 9.9e-5; its integration test's bound is 1e-3."""
    from bench import batch_exactness

    assert "under 1e-4" not in step_text.NEAR_TIE
    assert ("batched logits differ from solo ones by about 1e-4 at most in the runs measured on the embedded model, "
            "on a CPU in float32 (`python -m bench.batch_exactness`)") in step_text.NEAR_TIE
    assert batch_exactness.TOLERANCE > 1e-4  # what the test asserts is looser than what the runs measured


def test_the_same_seed_gives_the_pages_tokens_on_a_cpu_and_only_greedy_ones_elsewhere():
    """The app draws on the CPU; generate and the loop draw on the model's device."""
    for note in (step_text.generate_call, step_text.loop_code):
        cpu, gpu = note("cpu"), note("cuda")
        assert "exactly the tokens" not in cpu + gpu
        assert "Run on a CPU, as this server runs it, this " in cpu
        assert ("draws its random numbers from the GPU's own generator, which the same seed starts on another "
                "sequence than the CPU's, so there only greedy runs (temperature 0) can give these tokens, and the "
                "bfloat16 or float16 that `load_model` picks on a GPU tips near-ties more easily.") in cpu
        assert "Run on a CPU, as this server runs it" not in gpu and "(the tests check this on a CPU only)" in gpu
        assert gpu.count("This server runs the model on cuda but draws each token on the CPU") == 1
        assert ("only greedy runs (temperature 0), on this model, device and dtype, give the tokens you get here by "
                "clicking **Next token**") in gpu
    assert "(a test checks it)" in step_text.generate_call("cpu")
    assert step_text.NEAR_TIE in step_text.generate_call("cpu")
    assert "unless rounding tips a near-tie as above." in step_text.loop_code("cpu")
    assert step_text.NEAR_TIE in step_text.generate_call("cuda")
    from autoreg_core.engine.loading import choose_dtype  # what the GPU branch says load_model picks there

    assert choose_dtype(torch.device("cpu")) == torch.float32 and choose_dtype(torch.device("cuda")) in (
        torch.bfloat16, torch.float16)
    assert "this loop gives the tokens" in step_text.loop_code("cpu") and "(a test runs this very text)" in (
        step_text.loop_code("cpu"))


def test_the_generate_snippet_promises_the_apps_tokens_on_a_cpu_only(tiny):
    from autoreg_core import SamplingConfig
    from autoreg_core.experiments.generate_call import generate_snippet

    code = generate_snippet(SamplingConfig(temperature=0.8, seed=7), tiny, "Hi", chat=False)
    assert "# on a CPU: the app's tokens (a GPU draws from its own generator)" in code
    assert "same seed → same tokens as the app" not in code


def test_the_metric_help_reads_perplexity_as_surprise_and_entropy_as_hesitation():
    assert "fair choice" not in step_text.PERPLEXITY_HELP
    assert "For greedy text it understates the model's uncertainty" in step_text.PERPLEXITY_HELP
    assert step_text.ENTROPY_HELP.endswith("its hesitation, in bits.")
    assert "carried their rows too" in step_text.LAST_STEP_HELP


def test_the_same_tokens_only_for_the_first_steps_settings_and_seed_and_nothing_forced():
    """The snippets use the settings shown now; the session fixed its seed at its first step and may hold forced
    tokens: both notes say so, on every device."""
    assert ("as long as every step of this tab used the sidebar's current settings, the seed is the one this tab fixed "
            "at its first step, and no token was forced (the code uses the settings shown now)") == step_text.SAME_RUN
    for note in (step_text.generate_call, step_text.loop_code):
        for device in ("cpu", "cuda", "mps"):
            assert note(device).count(step_text.SAME_RUN) == 1, (note, device)
    said = step_text.generate_call("cpu")
    assert "(a test checks it) as long as every step of this tab used the sidebar's current settings" in said


def test_the_snippets_put_the_ids_on_the_models_device(tiny):
    """On a GPU the loop feeds ids to the model and appends its tokens to them; generate then draws on the model's
    device too, as the notes say (transformers 5.23 draws on the ids' device)."""
    from autoreg_core import SamplingConfig
    from autoreg_core.experiments.generate_call import generate_snippet, loop_snippet

    for chat in (False, True):
        for make in (generate_snippet, loop_snippet):
            code = make(SamplingConfig(temperature=0.8, seed=7), tiny, "Hi", chat=chat)
            lines = [line for line in code.splitlines() if line.startswith("ids = ")]
            assert len(lines) == 1 and lines[0].endswith(".input_ids.to(model.device)"), (make, chat)
            assert code.index("model, tok") < code.index("ids = ")  # model exists before the ids move to it


def test_this_step_title_is_one_line_and_a_caption_sentence():
    from autoreg_ui.charts import split_title

    title, caption = split_title(step_text.step_title(3, "sampled", "·cat", 0.412, 0.709, 2, 22))
    assert title == "Step 3: sampled “·cat”, p = 0.412"
    assert caption == ("p is its probability in the model's own softmax, where it ranked 2; after the filters its "
                       "probability is 0.709, with 22 tokens kept.")
    assert step_text.step_title(1, "greedy", "x", 0.5, 1.0, 1, 1, one_line=True) == (
        "Step 1: greedy “x”, p = 0.500, 1 token kept")
