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
