"""The attention page's data: rows captured per step, gaps backfilled, the GQA map; checked against eager attention."""
import numpy as np
import pytest
import torch
from tiny import tiny_tokenizer

from autoreg_core import SamplingConfig, Session, bundle_from_model
from autoreg_core.engine.attention import (
    query_to_kv_head,
    supports_attention,
)
from autoreg_core.experiments import attention_rows as av
from autoreg_ui.lessons.attention import figures as fig_att

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=50)


PROMPT = "The cat sat on the mat. The dog"


def test_rows_sum_to_one_have_cache_length_and_mask_the_future(tiny):
    s = Session(tiny, PROMPT, capture_attention=True)
    s.generate(5, GREEDY)
    L, H, P = tiny.spec.n_layers, tiny.spec.n_heads, s.prompt_len
    pre = s.prefill_record.attention.float()
    assert pre.shape == (L, H, P, P)
    future = torch.triu(torch.ones(P, P, dtype=torch.bool), diagonal=1)
    assert torch.all(pre[:, :, future] == 0)  # masked future positions are exactly zero
    torch.testing.assert_close(pre.sum(-1), torch.ones(L, H, P), atol=2e-3, rtol=0)
    for rec in s.records:
        assert rec.attention.shape == (L, H, rec.cache_len)  # a row has exactly the cache length
        torch.testing.assert_close(rec.attention.float().sum(-1), torch.ones(L, H), atol=2e-3, rtol=0)

    N = s.cache_len
    assert N == P + 5 and av.n_rows(s) == N
    for head in (None, 0, H - 1):
        z, sources = av.triangle(s, 1, head)
        assert z.shape == (N, N)
        assert sources == [av.PREFILL] * P + [av.DECODE] * 5
        assert np.isnan(z[np.triu_indices(N, 1)]).all()  # the future is left blank in the picture
        assert np.isfinite(z[np.tril_indices(N)]).all()  # every visible key has a weight
        np.testing.assert_allclose(np.nansum(z, axis=1), np.ones(N), atol=2e-3)
    z_mean, _ = av.triangle(s, 0, None)  # the mean over heads is the mean of the per-head rows
    z_heads = np.stack([av.triangle(s, 0, h)[0] for h in range(H)])
    lower = np.tril_indices(N)
    np.testing.assert_allclose(z_mean[lower], z_heads.mean(axis=0)[lower], atol=1e-6)

    pos, row = av.latest_row(s)
    assert pos == N - 1 and row.shape == (L, H, N)
    torch.testing.assert_close(row, s.records[-1].attention.float())
    np.testing.assert_allclose(av.select_heads(row, 1, 0), row[1, 0].numpy())


def test_missing_rows_are_reported_then_backfilled(tiny):
    captured = Session(tiny, PROMPT, capture_attention=True)
    captured.generate(4, GREEDY)
    s = Session(tiny, PROMPT)  # capture off, as on the step page
    s.generate(2, GREEDY)
    s.generate(2, GREEDY, capture_attention=True)  # then two steps on the attention page
    P = s.prompt_len
    assert av.row_sources(s) == [av.MISSING] * P + [av.MISSING, av.MISSING, av.DECODE, av.DECODE]
    assert av.attention_row(s, 0) is None and av.attention_row(s, P + 1) is None
    z, _ = av.triangle(s, 0, 0)
    assert np.isnan(z[: P + 2]).all()  # missing rows are not invented
    assert np.isfinite(z[P + 2, : P + 3]).all()

    kept = s.records[-1].attention.clone()
    assert av.backfill(s) == P + 2
    assert av.row_sources(s) == [av.PREFILL] * P + [av.DECODE] * 4
    assert av.backfill(s) == 0  # nothing left to do
    assert torch.equal(s.records[-1].attention, kept)  # captured rows are left as they were
    assert s.ids == captured.ids and len(s.ids) == P + 4
    for q in range(s.cache_len):
        torch.testing.assert_close(av.attention_row(s, q), av.attention_row(captured, q), atol=2e-3, rtol=0)


def test_ensure_prefill_fills_prompt_rows_only(tiny):
    s = Session(tiny, PROMPT)
    assert av.latest_row(s) is None and av.row_sources(s) == []  # nothing through the model yet
    assert av.ensure_prefill(s, capture=True)
    assert av.row_sources(s) == [av.PREFILL] * s.prompt_len
    assert not av.ensure_prefill(s, capture=True)  # idempotent
    s.generate(1, GREEDY)  # without capture
    assert not av.ensure_prefill(s, capture=True)  # the prompt rows exist; the step's row is not its job
    assert av.row_sources(s) == [av.PREFILL] * s.prompt_len + [av.MISSING]


def test_ensure_prefill_backfills_prompt_rows_of_an_uncaptured_prefill(tiny):
    s = Session(tiny, PROMPT)
    s.prefill()  # on the step page: no capture
    assert av.row_sources(s) == [av.MISSING] * s.prompt_len
    assert av.ensure_prefill(s, capture=True)
    assert av.row_sources(s) == [av.PREFILL] * s.prompt_len


def test_backfill_refuses_long_sequences(tiny, monkeypatch):
    s = Session(tiny, PROMPT)
    s.prefill()
    monkeypatch.setattr(av, "MAX_FULL_TOKENS", 3)
    ok, why = av.can_backfill(s)
    assert not ok and why == (f"The sequence has {s.prompt_len} tokens; recomputing every row is limited to 3 "
                              "to keep memory per tab bounded.")
    with pytest.raises(ValueError, match="limited to 3"):
        av.backfill(s)
    assert av.row_sources(s) == [av.MISSING] * s.prompt_len


def test_nothing_to_backfill_before_the_prefill(tiny):
    s = Session(tiny, PROMPT)
    assert av.can_backfill(s) == (False, "Nothing has been through the model yet.")


def test_one_token_prompt(tiny):
    tok = tiny_tokenizer()
    prompt = next(w for w in ("The", "the", "a", "A", "T") if len(tok(w)["input_ids"]) == 1)
    s = Session(tiny, prompt, capture_attention=True)
    av.ensure_prefill(s)
    z, sources = av.triangle(s, 0, 0)
    assert z.shape == (1, 1) and z[0, 0] == pytest.approx(1.0, abs=1e-3) and sources == [av.PREFILL]
    s.generate(1, GREEDY)
    z, _ = av.triangle(s, 0, None)
    assert z.shape == (2, 2)
    fig = fig_att.triangle_figure(z, [v.label for v in s.views()], av.row_sources(s), s.prompt_len, "t")
    assert fig.data[1].z.shape == (2, 2)


def test_gqa_info():
    g = av.gqa_info(9, 3)
    assert g.kv_of_query == query_to_kv_head(9, 3) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert g.group == 3 and g.queries_of(1) == [3, 4, 5]
    fig = fig_att.gqa_figure(g.kv_of_query, 3, selected_head=4)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert len(lines) == 9 and lines[4].line.width > lines[0].line.width
    assert list(lines[8].x) == [8, 7.0]  # query head 8 wired to the middle of group 2


def test_unsupported_model_has_no_backfill(tiny):
    class NotLlama(torch.nn.Module):
        config = tiny.model.config

        def parameters(self, recurse=True):
            return tiny.model.parameters()

    assert supports_attention(tiny.model) and not supports_attention(NotLlama())
    bundle = bundle_from_model(tiny.model, tiny.tokenizer)
    s = Session(bundle, PROMPT)
    s.prefill()
    s.bundle = type(bundle)(name="x", model=NotLlama(), tokenizer=tiny.tokenizer, device=bundle.device,
                            dtype=bundle.dtype)
    assert av.can_backfill(s) == (False, "Attention capture does not support NotLlama.")
    assert not av.backfill_prompt(s)
