"""Attention capture and its arrangement: equal to transformers' eager attention, honest rows, safe HTML.

Covers ``autoreg_core.attention``, ``autoreg_core.attention_view`` and the attention figure builders.
"""
import numpy as np
import pytest
import torch

from autoreg_core import SamplingConfig, Session, bundle_from_model, decode
from autoreg_core import attention_view as av
from autoreg_core.attention import attention_weights, query_to_kv_head, supports_attention
from autoreg_ui import palette
from autoreg_ui.figures import attention as fig_att
from tiny import tiny_model, tiny_tokenizer

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


def test_strip_html_escapes_and_shades():
    html = fig_att.attention_strip_html(["<script>alert(1)</script>", "ok", "&"], [0.2, 0.8, np.nan], 1, 1)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&amp;" in html
    top = palette.alpha(fig_att.QUERY_COLOR, fig_att.STRIP_MAX_ALPHA)  # the row's max: darkest
    quarter = palette.alpha(fig_att.QUERY_COLOR, fig_att.STRIP_MAX_ALPHA * 0.25)
    chips = html.split('<span class="atok"')[1:]
    assert len(chips) == 3
    assert quarter in chips[0] and "prompt" in chips[0]
    assert top in chips[1] and "the query" in chips[1] and "prompt" not in chips[1]
    assert palette.NOT_VISIBLE in chips[2] and "not visible" in chips[2]


def test_figures_carry_the_data():
    labels = ["a", "<b>", "c"]
    w = np.array([0.5, 0.25, 0.25])
    bar = fig_att.attention_bar_figure(labels, w, 2, "t")
    np.testing.assert_allclose(bar.data[0].y, w)
    assert list(bar.layout.xaxis.ticktext) == ["a", "&lt;b&gt;", "c"]
    assert list(bar.data[0].marker.color) == [fig_att.PROMPT_COLOR, fig_att.PROMPT_COLOR, fig_att.QUERY_COLOR]
    grid = fig_att.heads_grid_figure(labels, np.tile(w, (9, 1)), query_to_kv_head(9, 3), "g")
    assert len(grid.data) == 9
    assert [t.marker.color for t in grid.data[:4]] == [fig_att.KV_COLORS[0]] * 3 + [fig_att.KV_COLORS[1]]
    z = np.array([[1, np.nan, np.nan], [0.4, 0.6, np.nan], [np.nan] * 3])
    tri = fig_att.triangle_figure(z, labels, [av.PREFILL, av.DECODE, av.MISSING], 1, "tri")
    assert tri.data[1].z.shape == (3, 3)
    assert [row[0] for row in tri.data[0].z] == [0, 1, 2]  # prefill / decode / missing strip
    assert [sh.type for sh in tri.layout.shapes] == ["rect", "line"]  # the missing row; the boundary
    assert tri.layout.yaxis.title.text == "query (new token)"
    assert tri.layout.xaxis2.title.text == "key (cached token)"


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


def test_triangle_window_uses_absolute_positions():
    n, first = 4, 10
    z = np.tril(np.full((n, n), 0.25))
    z[np.triu_indices(n, 1)] = np.nan
    fig = fig_att.triangle_figure(z, list("abcd"), [av.DECODE, av.MISSING, av.DECODE, av.DECODE], 12, "w",
                                  first=first)
    heat = fig.data[1]
    assert list(heat.x) == list(heat.y) == [10, 11, 12, 13]
    assert [row[0] for row in fig.data[0].z] == [0, 2, 1, 1]  # position 10, 11 are prompt; 11 missing
    line = next(sh for sh in fig.layout.shapes if sh.type == "line")
    assert line.y0 == 11.5 and line.x0 == 9.5
    rect = next(sh for sh in fig.layout.shapes if sh.type == "rect")
    assert (rect.y0, rect.y1, rect.x1) == (10.5, 11.5, 11.5)
    assert fig.layout.yaxis.ticktext[0].startswith("10: ")
