"""The sidebar's model line and the chat switch's reason, read from the checkpoint's config."""
from autoreg_ui import family_text, keys, prompt
from tests import zoo


def test_every_zoo_family_has_its_usual_name():
    names = [family_text.family_name(zoo.config(f).model_type) for f in zoo.FAMILIES]
    assert names == ["GPT-2", "GPT-NeoX", "OPT", "Phi-3", "Llama", "Qwen2", "Qwen3", "Mistral", "Gemma 2"]
    assert family_text.family_name("falcon") == "falcon"  # a type not listed: as transformers spells it


def test_parameter_counts_on_each_side_of_a_million_and_a_billion():
    assert [family_text.parameter_count(n) for n in (999_999, 1_000_000, 134_515_008, 999_999_999 + 1,
                                                     1_234_567_890)] == \
        ["999,999", "1.0 M", "134.5 M", "1.00 B", "1.23 B"]


def test_the_model_line_names_family_size_device_and_dtype():
    bundle = zoo.bundle("gpt2")
    from autoreg_ui.sidebar import model_line

    line = model_line(bundle)
    assert line == f"tiny-gpt2 · GPT-2 architecture · {bundle.spec.n_params:,} parameters · cpu · float32"


def test_chat_mode_is_turned_off_only_for_a_model_without_a_template():
    with_template = {keys.CHAT_KEPT: True, keys.CHAT_BOX: True}
    prompt.settle_chat(with_template, has_chat_template=True)
    assert with_template == {keys.CHAT_KEPT: True, keys.CHAT_BOX: True}
    without = {keys.CHAT_KEPT: True, keys.CHAT_BOX: True}
    prompt.settle_chat(without, has_chat_template=False)
    assert without == {keys.CHAT_KEPT: False, keys.CHAT_BOX: False}
    assert [zoo.bundle(f).has_chat_template for f in ("gpt2", "gpt_neox", "opt", "llama")] == [False, False, False,
                                                                                                 True]
    assert family_text.chat_off("tiny-gpt2") == ("Chat mode is off: tiny-gpt2's tokenizer has no chat template, so "
                                                 "the prompt goes in as plain text.")


def test_the_dial_names_one_tied_matrix_or_two_separate_ones_from_the_model():
    from autoreg_ui.lessons.serving import controller as serving
    from autoreg_ui.lessons.serving import text as serving_text

    assert [serving.tied_head(zoo.bundle(f)) for f in ("gpt2", "qwen2", "llama", "opt")] == [True, True, False, True]
    assert "(one tied matrix in tiny-qwen2)" in serving_text.dial_keeps("tiny-qwen2", True)
    assert "(two separate matrices in tiny-llama)" in serving_text.dial_keeps("tiny-llama", False)


def test_the_window_lesson_says_when_the_model_slides_its_own_window():
    from autoreg_ui.lessons.inside import controller as inside
    from autoreg_ui.lessons.inside import text as inside_text

    windows = {f: inside.own_windows(zoo.config(f)) for f in ("llama", "mistral", "gemma2")}
    assert windows == {"llama": [None, None], "mistral": [8, 8], "gemma2": [8, None]}
    assert inside_text.cache_runs_out(windows["llama"], "Llama") == inside_text.CACHE_RUNS_OUT  # unchanged
    mistral = inside_text.cache_runs_out(windows["mistral"], "Mistral")
    gemma = inside_text.cache_runs_out(windows["gemma2"], "Gemma 2")
    assert "2 of its 2 layers attend over the last 8 positions only" in mistral and "changes nothing" in mistral
    assert "1 of its 2 layers" in gemma and "changes only the other layers" in gemma
    assert all("trained with full attention" not in s for s in (mistral, gemma))
    assert inside_text.window_captions(16)[0].startswith("Full cache")
    assert inside_text.window_captions(16, inside.widest(windows["gemma2"]))[0].startswith(
        "The model's own cache (window 8)")
    assert inside.widest(windows["llama"]) is None


def test_what_the_dial_keeps_is_said_in_the_loaded_dtype():
    from autoreg_ui.lessons.serving import text as serving_text

    assert serving_text.dial_keeps("m", True, "bfloat16").endswith("stay bfloat16.")


def test_a_sliding_model_s_own_cache_is_not_called_full():
    from autoreg_ui.lessons.inside import text as inside_text

    said = inside_text.cache_runs_out([8, None], "Gemma 2")
    assert "1 of its 2 layers attends over the last 8 positions only, and its cache keeps 7" in said
    assert "trained with full attention" not in said and "uses one, as its config says" in said
    assert "2 of its 2 layers attend" in inside_text.cache_runs_out([8, 8], "Mistral")
    assert inside_text.window_captions(4, 8)[0].startswith("The model's own cache (window 8)")
