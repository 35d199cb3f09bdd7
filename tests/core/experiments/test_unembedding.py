"""logits = W·h + b, rebuilt from the last hidden state and the LM head, equals the model's logits."""
import math

import pytest

from autoreg_core.experiments.unembedding import unembed


def test_w_h_plus_b_rebuilds_the_tiny_models_logits(tiny):
    ids = tiny.tokenizer("The cat sat on the")["input_ids"]
    u = unembed(tiny, ids, k=5)
    assert u.largest_gap < 1e-4 and u.vocab == tiny.spec.vocab and u.hidden_size == tiny.spec.hidden
    assert len(u.top) == 5 and [t.logit for t in u.top] == sorted((t.logit for t in u.top), reverse=True)
    for t in u.top:
        assert t.dot == pytest.approx(t.logit, abs=1e-4)
        assert t.row_norm * u.hidden_norm * t.cosine + t.bias == pytest.approx(t.dot, rel=1e-4, abs=1e-4)
        assert -1 <= t.cosine <= 1


@pytest.mark.integration
def test_on_the_embedded_model_the_head_is_the_embedding_and_has_no_bias(embedded):
    u = unembed(embedded, embedded.tokenizer("The capital of France is")["input_ids"])
    assert u.tied and not u.has_bias and u.largest_gap < 1e-3 and math.isfinite(u.hidden_norm)
