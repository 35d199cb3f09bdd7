"""The logit lens and the precision paths on every family of the zoo: the lens at the last layer is the model's own
logits (Gemma 2's cap included); the int8 paths and the bit dial reach every family's layers."""
import pytest
import torch

from autoreg_core.experiments import logit_lens
from tests import zoo


@pytest.mark.parametrize("family", zoo.FAMILIES)
def test_the_lens_ends_on_the_models_logits(family):
    bundle = zoo.bundle(family)
    ids = torch.tensor([bundle.tokenizer("The cat sat on the mat.")["input_ids"]])
    with torch.inference_mode():
        out = bundle.model(ids, output_hidden_states=True)
        lens = logit_lens.layer_logits(bundle, out.hidden_states)
    assert lens.shape == (bundle.spec.n_layers + 1, bundle.spec.vocab)
    assert torch.allclose(lens[-1], out.logits[0, -1].float(), atol=1e-4)
    assert not torch.allclose(lens[1], lens[-1], atol=1e-4)  # the first layer's reading is another one


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
