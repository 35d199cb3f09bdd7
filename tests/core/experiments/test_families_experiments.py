"""The logit lens and the early-exit draft on every family of the zoo: the lens at the last layer is the model's own
logits (Gemma 2's cap included), and a draft of the first layer reads what the lens reads after layer 1."""
import pytest
import torch

from autoreg_core.experiments import logit_lens
from autoreg_core.experiments import speculative_decoding as sd
from tests import zoo


@pytest.mark.parametrize("family", zoo.FAMILIES)
def test_the_lens_ends_on_the_models_logits_and_the_draft_stops_after_its_layers(family):
    bundle = zoo.bundle(family)
    ids = torch.tensor([bundle.tokenizer("The cat sat on the mat.")["input_ids"]])
    with torch.inference_mode():
        out = bundle.model(ids, output_hidden_states=True)
        lens = logit_lens.layer_logits(bundle, out.hidden_states)
        draft = sd.early_exit_bundle(bundle, 1)
        drafted = draft.model(ids).logits[0, -1].float()
    assert lens.shape == (bundle.spec.n_layers + 1, bundle.spec.vocab)
    assert torch.allclose(lens[-1], out.logits[0, -1].float(), atol=1e-4)
    assert torch.allclose(drafted, lens[1], atol=1e-4)
    assert not torch.allclose(drafted, lens[-1], atol=1e-4)  # one layer fewer is another reading


def test_only_a_capped_model_is_capped():
    logits = torch.tensor([-100.0, 0.0, 100.0])
    assert torch.equal(logit_lens.capped(zoo.config("llama"), logits), logits)
    capped = logit_lens.capped(zoo.config("gemma2"), logits)
    assert capped.abs().max() < 30.0 and capped[1] == 0.0


@pytest.mark.parametrize("family", ["gpt2", "opt", "gpt_neox", "llama"])
def test_every_int8_path_and_the_dial_reach_the_layers_of_each_family(family):
    from autoreg_core.experiments import precision

    bundle = zoo.bundle(family)
    layers = precision.decoder_layers(bundle.model, bundle.spec.n_layers)
    assert len(layers) == bundle.spec.n_layers
    int8 = precision.variant_bundle(bundle, precision.INT8)
    quantized = precision.int8_layers(int8.model)
    # every projection inside the layers is int8 (GPT-2's Conv1D ones included), not only the LM head
    assert sum(1 for name in quantized if name != "lm_head") >= 4 * bundle.spec.n_layers
    q8 = precision.variant_bundle(bundle, precision.INT8_WEIGHTS)
    assert sum(isinstance(m, precision.Q8Linear) for m in q8.model.modules()) >= 4 * bundle.spec.n_layers
    ids = torch.tensor([bundle.tokenizer("The cat sat on the mat.")["input_ids"]])
    with torch.inference_mode():
        exact = bundle.model(ids).logits[0, -1]
        near = q8.model(ids).logits[0, -1]
    assert 0 < float((exact - near).abs().max()) < 0.5  # rounded, and close
    rounded = precision.rounded_bundle(bundle, 2)
    before = [p.detach().clone() for p in precision.decoder_layers(bundle.model, bundle.spec.n_layers).parameters()]
    after = list(precision.decoder_layers(rounded.model, bundle.spec.n_layers).parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before))  # the dial changed the layers' weights


@pytest.mark.parametrize("family", ["mistral", "gemma2", "gpt2", "llama"])
def test_greedy_speculation_past_a_sliding_window_writes_the_plain_loops_tokens(family):
    """Rejected guesses are cut from the caches; a sliding layer past its window cannot be cropped, so the cache
    is rebuilt from the text, and the tokens stay the plain loop's."""
    from autoreg_core.engine.config import GREEDY

    bundle = zoo.bundle(family)
    prompt = bundle.tokenizer("The cat sat on the mat. The dog sat on the log.")["input_ids"]
    assert len(prompt) > zoo.WINDOW  # past the window from the prefill on
    plain = sd.plain_decode(bundle, prompt, 24, GREEDY, stop_at_eos=False)
    for draft in (sd.early_exit(bundle, 1), sd.PromptLookup()):
        fast = sd.speculate(bundle, prompt, draft, 4, 24, GREEDY)
        assert fast.tokens[:len(plain.tokens)] == plain.tokens[:len(fast.tokens)] and len(fast.tokens) >= 1
        assert any(r.accepted < len(r.drafted) for r in fast.rounds) or family == "llama"  # a guess was rejected


def test_keep_prefix_rebuilds_a_sliding_cache_it_cannot_crop():
    from autoreg_core.engine import decode

    bundle = zoo.bundle("mistral")
    ids = list(range(5, 25))
    cache = decode.new_cache(bundle)
    decode.forward(bundle, ids, cache)
    with pytest.raises(RuntimeError):
        cache.crop(-3)  # transformers refuses (at the first layer, before changing any): the window dropped them
    sd.keep_prefix(bundle, cache, ids[:-3])
    fresh = decode.new_cache(bundle)
    decode.forward(bundle, ids[:-3], fresh)
    assert cache.get_seq_length() == fresh.get_seq_length() == len(ids) - 3
    assert all(torch.equal(a.keys, b.keys) for a, b in zip(cache.layers, fresh.layers, strict=True))


@pytest.mark.parametrize("family", ["mistral", "llama"])
def test_a_repeated_timed_step_leaves_the_cache_as_it_found_it(family):
    from autoreg_core.engine import decode
    from autoreg_core.experiments import repeat_step

    bundle = zoo.bundle(family)
    cache = decode.new_cache(bundle)
    decode.forward(bundle, list(range(5, 25)), cache)  # past Mistral's window of 8
    before = [layer.keys.clone() for layer in cache.layers]
    assert repeat_step.slides(cache) == (family == "mistral")
    for _ in range(2):
        assert repeat_step.step_ms(bundle, cache, torch.tensor([[7]])) > 0
    assert cache.get_seq_length() == 20
    assert all(torch.equal(a, layer.keys) for a, layer in zip(before, cache.layers, strict=True))
