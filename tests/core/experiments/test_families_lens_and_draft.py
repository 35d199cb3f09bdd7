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
