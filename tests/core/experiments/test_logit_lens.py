"""The logit lens: the last layer read through the lens is the model's own logits (tiny model)."""
from __future__ import annotations

import pytest
import torch
from tiny import tiny_bundle

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine import decode
from autoreg_core.experiments import logit_lens as lens

PROMPT = "The cat sat on the mat. The dog"


def _ids(bundle) -> list[int]:
    return bundle.tokenizer(PROMPT)["input_ids"]


@pytest.fixture(scope="module")
def odd_norm():
    """A tiny model whose final norm has non-unit weights, so norming twice would show."""
    bundle = tiny_bundle(seed=3)
    with torch.no_grad():
        lens.final_norm(bundle.model).weight.copy_(torch.linspace(0.2, 3.0, bundle.config.hidden_size))
    return bundle


def test_last_layer_equals_the_models_logits(tiny):
    fwd = decode.forward(tiny, _ids(tiny), None, hidden_states=True)
    per_layer = lens.layer_logits(tiny, fwd.hidden_states)
    assert per_layer.shape == (tiny.spec.n_layers + 1, tiny.spec.vocab)
    assert torch.allclose(per_layer[-1], fwd.logits[0], atol=1e-5)


def test_last_entry_is_not_normed_twice(odd_norm):
    bundle = odd_norm
    assert lens.last_entry_is_normed(bundle.model)
    fwd = decode.forward(bundle, _ids(bundle), None, hidden_states=True)
    per_layer = lens.layer_logits(bundle, fwd.hidden_states)
    assert torch.allclose(per_layer[-1], fwd.logits[0], atol=1e-5)
    with torch.inference_mode():
        twice = bundle.model.get_output_embeddings()(lens.final_norm(bundle.model)(fwd.hidden_states[-1][:, -1]))[0]
    assert not torch.allclose(twice, fwd.logits[0], atol=1e-3)


def test_entry_zero_reads_the_embedding(odd_norm):
    bundle = odd_norm
    ids = _ids(bundle)
    fwd = decode.forward(bundle, ids, None, hidden_states=True)
    per_layer = lens.layer_logits(bundle, fwd.hidden_states)
    with torch.inference_mode():
        embedded = bundle.model.get_input_embeddings()(torch.tensor([ids[-1:]]))[:, -1]
        expected = bundle.model.get_output_embeddings()(lens.final_norm(bundle.model)(embedded))[0]
    assert torch.allclose(per_layer[0], expected, atol=1e-5)


def test_the_lens_agrees_with_a_cached_session(tiny):
    session = Session(tiny, PROMPT)
    session.generate(4, SamplingConfig(temperature=0.0))
    record = session.records[-1]
    reading = lens.logit_lens(tiny, session.ids[:record.context_len], record.token_id)
    assert reading.context_len == record.context_len and reading.target_id == record.token_id
    assert reading.depth == tiny.spec.n_layers + 1
    assert reading.target_ranks[-1] == record.rank == 1
    assert reading.target_probs[-1] == pytest.approx(record.prob, abs=1e-5)
    assert reading.last_gap < 1e-5
    shown = reading.top_ids.shape[-1]  # the lens keeps its own top list: the whole of it must match
    assert shown >= 10 and reading.top_ids[-1].tolist() == record.top_ids[:shown].tolist()


def test_default_target_is_the_models_favourite(tiny):
    ids = _ids(tiny)
    reading = lens.logit_lens(tiny, ids, k=5)
    assert reading.target_id == int(torch.argmax(decode.forward(tiny, ids).logits[0]))
    assert reading.top_ids.shape == reading.top_probs.shape == (tiny.spec.n_layers + 1, 5)
    assert reading.target_ranks[-1] == 1 and reading.settles_at is not None


def test_when_the_answer_appears():
    # target id 0; per entry the target is ranked 3, 1, 2, 1, 1
    logits = torch.tensor([[0.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [3.0, 0.0, 0.0], [5.0, 1.0, 0.0]])
    reading = lens.read_lens(logits, target_id=0, context_len=4, k=2)
    assert reading.target_ranks == [3, 1, 2, 1, 1]
    assert (reading.first_top, reading.settles_at) == (1, 3)
    assert reading.top_ids.tolist() == [[1, 2], [0, 1], [1, 0], [0, 1], [0, 1]]
    never = lens.read_lens(logits, target_id=2, context_len=4, k=2)
    assert (never.first_top, never.settles_at) == (None, None)


def test_context_is_bounded(tiny, monkeypatch):
    monkeypatch.setattr(lens, "MAX_TOKENS", 4)
    with pytest.raises(ValueError, match="1 to 4"):
        lens.logit_lens(tiny, [5, 6, 7, 8, 9])
    with pytest.raises(ValueError):
        lens.logit_lens(tiny, [])
