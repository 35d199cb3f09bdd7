"""Attention capture and its arrangement: equal to transformers' eager attention, honest rows, safe HTML.

Covers ``autoreg_core.engine.attention``, ``autoreg_core.experiments.attention_rows`` and the attention figure builders.
"""
import pytest
import torch
from tiny import tiny_model

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine import decode
from autoreg_core.engine.attention import attention_weights
from autoreg_core.experiments import attention_rows as av

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=50)
PROMPT = "The cat sat on the mat. The dog"


@pytest.fixture(scope="module")
def eager():
    return tiny_model(0, attn="eager")


def _eager_attentions(model, ids):
    """The reference: transformers' own eager attention weights, [L, H, N, N]."""
    with torch.inference_mode():
        out = model(torch.tensor([ids]), output_attentions=True)
    assert len(out.attentions) == model.config.num_hidden_layers
    return torch.stack([a[0] for a in out.attentions]).float()


def test_tiny_models_share_weights(tiny, eager):
    sd_e = eager.state_dict()
    assert sorted(sd_e) == sorted(tiny.model.state_dict())
    for name, value in tiny.model.state_dict().items():
        assert torch.equal(value, sd_e[name]), name


def test_recomputed_weights_equal_eager_attention_float32(tiny, eager):
    """attention_weights on the sdpa model's hidden states == eager attention, prefill and decode rows."""
    ids = tiny.tokenizer(PROMPT)["input_ids"]
    reference = _eager_attentions(eager, ids)
    fwd = decode.forward(tiny, ids, decode.new_cache(tiny), hidden_states=True)  # prefill: every row at once
    with torch.inference_mode():
        full = attention_weights(tiny.model, fwd.hidden_states, fwd.cache, q_start=0)
    assert full.shape == reference.shape == (tiny.spec.n_layers, tiny.spec.n_heads, len(ids), len(ids))
    torch.testing.assert_close(full, reference, atol=1e-5, rtol=0)
    cache = decode.new_cache(tiny)  # decode: the prompt minus its last token, then that token on the cache
    decode.forward(tiny, ids[:-1], cache)
    fwd = decode.forward(tiny, ids[-1:], cache, hidden_states=True)
    with torch.inference_mode():
        row = attention_weights(tiny.model, fwd.hidden_states, fwd.cache, q_start=len(ids) - 1)
    assert row.shape == (tiny.spec.n_layers, tiny.spec.n_heads, 1, len(ids))
    torch.testing.assert_close(row[:, :, 0], reference[:, :, -1], atol=1e-5, rtol=0)


def test_session_capture_equals_eager(tiny, eager):
    """What the Session stores (float16) matches eager attention for prefill and every decode row."""
    s = Session(tiny, PROMPT, capture_attention=True)
    s.generate(6, GREEDY)
    assert len(s.records) == 6
    reference = _eager_attentions(eager, s.ids[: s.cache_len])
    P = s.prompt_len
    torch.testing.assert_close(s.prefill_record.attention.float(), reference[:, :, :P, :P], atol=1e-3, rtol=0)
    for i, rec in enumerate(s.records):
        pos = P + i
        torch.testing.assert_close(rec.attention.float(), reference[:, :, pos, : pos + 1], atol=1e-3, rtol=0)


def test_full_recomputation_equals_eager(tiny, eager):
    """The backfill's one pass over the whole sequence (through decode.forward) == eager attention."""
    s = Session(tiny, PROMPT)
    s.generate(5, GREEDY)
    full = av.compute_full_attention(s)
    N = s.prompt_len + 5
    assert full.shape == (tiny.spec.n_layers, tiny.spec.n_heads, N, N)
    torch.testing.assert_close(full, _eager_attentions(eager, s.ids[:N]), atol=1e-5, rtol=0)
    prompt_only = av.compute_full_attention(s, s.prompt_len)
    assert prompt_only.shape == (tiny.spec.n_layers, tiny.spec.n_heads, s.prompt_len, s.prompt_len)
    assert s.cache_len == N  # the session's own cache was not touched


def test_capture_does_not_change_tokens(tiny):
    cfg = SamplingConfig(temperature=1.2, top_k=0, top_p=1.0, seed=11, max_new_tokens=40)
    a = Session(tiny, "Once upon a time", capture_attention=True)
    b = Session(tiny, "Once upon a time", capture_attention=False)
    a.generate(15, cfg)
    b.generate(15, cfg)
    assert len(a.ids) == len(b.ids) == a.prompt_len + 15
    assert a.ids == b.ids
    assert [tuple(r.attention.shape) for r in a.records] == [
        (tiny.spec.n_layers, tiny.spec.n_heads, a.prompt_len + i) for i in range(1, 16)]
    assert [r.attention for r in b.records] == [None] * 15


