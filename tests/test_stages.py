"""The sampling stages against transformers' warpers, the draws, the sweep, bad input, continuations."""
import math

import pytest
import torch
from transformers import (MinPLogitsWarper, RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper,
                          TopKLogitsWarper, TopPLogitsWarper)

from autoreg_core import SamplingConfig, Session, sampling
from autoreg_core import stages as sg
from autoreg_core.continuations import distinct_n, repetition_rate, sample_continuations
from autoreg_ui.figures.sampling import (REMOVED_COLOR, draw_figure, draws_figure, pipeline_figure,
                                           strategies_figure, sweep_figure)

VOCAB = 500


def _logits(seed=0, vocab=VOCAB, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(vocab, generator=g) * scale


def _apply(proc, ids, scores):
    return proc(ids.view(1, -1), scores.unsqueeze(0))[0]


def _same(a, b):
    """allclose that treats -inf (removed) as equal."""
    return torch.equal(torch.isinf(a), torch.isinf(b)) and torch.allclose(
        a[~torch.isinf(a)], b[~torch.isinf(b)], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("cfg", [
    SamplingConfig(temperature=0.7, top_k=50, top_p=0.9, min_p=0.05, repetition_penalty=1.3),
    SamplingConfig(temperature=1.5, top_k=0, top_p=0.8, min_p=0.0),
    SamplingConfig(temperature=0.3, top_k=5, top_p=1.0, min_p=0.2),
    SamplingConfig(temperature=1.0),
])
def test_each_stage_matches_transformers_warpers(cfg):
    logits, ctx = _logits(1), torch.tensor([3, 7, 7, 42, 99])
    pipe = sg.run_pipeline(logits, cfg, ctx)
    expect = logits.clone()
    by_name = {s.name: s for s in pipe.stages}
    assert _same(by_name[sg.RAW].scores, logits)
    if cfg.repetition_penalty != 1.0:
        expect = _apply(RepetitionPenaltyLogitsProcessor(cfg.repetition_penalty), ctx, expect)
        assert _same(by_name[sg.REPETITION].scores, expect)
    if cfg.temperature != 1.0:
        expect = _apply(TemperatureLogitsWarper(cfg.temperature), ctx, expect)
    assert _same(by_name[sg.TEMPERATURE].scores, expect)
    if cfg.top_k:
        expect = _apply(TopKLogitsWarper(cfg.top_k), ctx, expect)
    assert _same(by_name[sg.TOP_K].scores, expect)
    if cfg.top_p < 1.0:
        expect = _apply(TopPLogitsWarper(cfg.top_p), ctx, expect)
    assert _same(by_name[sg.TOP_P].scores, expect)
    if cfg.min_p > 0:
        expect = _apply(MinPLogitsWarper(cfg.min_p), ctx, expect)
    assert _same(by_name[sg.MIN_P].scores, expect)
    # the last stage is what the engine (and generate) sample from
    assert _same(pipe.final_scores, sampling.process_logits(logits, ctx, cfg))
    assert torch.allclose(pipe.probs, sampling.filtered_probs(sampling.process_logits(logits, ctx, cfg), cfg))


def test_stages_do_what_their_definitions_say():
    logits = _logits(2)
    cfg = SamplingConfig(temperature=0.8, top_k=60, top_p=0.7, min_p=0.1)
    pipe = sg.run_pipeline(logits, cfg)
    by_name = {s.name: s for s in pipe.stages}
    assert torch.allclose(by_name[sg.TEMPERATURE].scores, logits / 0.8)  # plain arithmetic, not the warper
    assert by_name[sg.TOP_K].kept == 60
    assert set(by_name[sg.TOP_K].removed.tolist()) == set(torch.topk(logits, VOCAB).indices[60:].tolist())
    # nucleus: the kept set reaches p, and without its least likely member it would not
    entering = by_name[sg.TOP_K].probs
    kept = torch.nonzero(by_name[sg.TOP_P].scores > -math.inf).flatten()
    mass = float(entering[kept].sum())
    assert mass >= 0.7 - 1e-6 and mass == pytest.approx(by_name[sg.TOP_P].threshold)
    assert mass - float(entering[kept].min()) < 0.7
    # min-p: every survivor is at least min_p × the top probability of what entered
    entering = by_name[sg.TOP_P].probs
    survivors = pipe.probs > 0
    assert bool((entering[survivors] >= 0.1 * entering.max() - 1e-7).all())
    assert bool((entering[~survivors & (entering > 0)] < 0.1 * entering.max()).all())
    # bookkeeping: every id is kept or removed by exactly one stage
    assert int((pipe.removed_by < 0).sum()) == pipe.kept
    for k, stage in enumerate(pipe.stages):
        assert set(stage.removed.tolist()) == set(torch.nonzero(pipe.removed_by == k).flatten().tolist())
    assert pipe.probs.sum().item() == pytest.approx(1.0, abs=1e-5)


def test_greedy_is_temperature_zero():
    logits = _logits(3)
    pipe = sg.run_pipeline(logits, SamplingConfig(temperature=0.0, top_k=5, top_p=0.5))
    assert pipe.greedy and pipe.kept == 1 and int(torch.argmax(pipe.probs)) == int(torch.argmax(logits))
    assert any(s.name == sg.GREEDY for s in pipe.stages)


@pytest.mark.parametrize("t", [1e-3, 1e-20, 1e-44])
def test_tiny_temperature_never_blows_up(t):
    logits = _logits(4) * 10
    pipe = sg.run_pipeline(logits, SamplingConfig(temperature=t))
    assert not bool(torch.isnan(pipe.probs).any())
    assert int(torch.argmax(pipe.probs)) == int(torch.argmax(logits))
    assert pipe.probs.max().item() == pytest.approx(1.0, abs=1e-4)
    if t < 1e-30:  # logits / T overflows float32: the pipeline says it is greedy
        assert pipe.greedy and any("overflow" in n for n in pipe.notes)


def test_bad_filter_values():
    logits = _logits(5)
    assert sg.run_pipeline(logits, SamplingConfig(top_p=0.0)).kept == 1
    assert sg.run_pipeline(logits, SamplingConfig(top_p=1.0)).kept == VOCAB
    assert sg.run_pipeline(logits, SamplingConfig(top_k=0)).kept == VOCAB
    big = sg.run_pipeline(logits, SamplingConfig(top_k=VOCAB + 10))
    assert big.kept == VOCAB and any("larger than the vocabulary" in n for n in big.notes)
    tied = logits.clone()
    tied[[10, 20]] = tied.max() + 1
    assert set(sg.run_pipeline(tied, SamplingConfig(min_p=1.0)).kept_ids.tolist()) == {10, 20}
    neg = sg.run_pipeline(logits, SamplingConfig(temperature=-1, top_p=2.0, min_p=-0.5))
    assert neg.greedy and neg.notes


@pytest.mark.parametrize("bad", [torch.full((VOCAB,), -math.inf), torch.full((VOCAB,), math.nan)])
def test_everything_filtered_falls_back_to_the_top_token(bad):
    for cfg in (SamplingConfig(), SamplingConfig(temperature=0.0), SamplingConfig(top_k=3, top_p=0.5)):
        pipe = sg.run_pipeline(bad, cfg)
        assert pipe.fallback and pipe.kept == 1 and any("falling back" in n for n in pipe.notes)
        assert not bool(torch.isnan(pipe.probs).any())
        draw = sg.inverse_cdf_draw(pipe.probs, 0)
        assert pipe.probs[draw.token_id] == 1.0


def test_inverse_cdf_draw_lands_in_the_kept_set():
    pipe = sg.run_pipeline(_logits(6), SamplingConfig(temperature=1.2, top_k=30, top_p=0.8))
    kept = set(pipe.kept_ids.tolist())
    seen = set()
    for seed in range(300):
        d = sg.inverse_cdf_draw(pipe.probs, seed)
        assert d.token_id in kept
        lo = 0.0 if d.position == 0 else float(d.cdf[d.position - 1])
        assert lo <= d.u < float(d.cdf[d.position])
        seen.add(d.token_id)
    assert len(seen) > 3  # it really samples
    assert sg.inverse_cdf_draw(pipe.probs, 7).token_id == sg.inverse_cdf_draw(pipe.probs, 7).token_id


def test_ten_thousand_draws_match_the_probabilities():
    """Tolerance: every token's frequency within 5 standard errors (+1e-3) of its probability."""
    pipe = sg.run_pipeline(_logits(7, scale=1.5), SamplingConfig(temperature=1.0, top_k=20))
    many = sg.draw_many(pipe.probs, 10_000, seed=123)
    assert many.n == 10_000 and int(many.counts.sum()) == 10_000
    p = pipe.probs.double()
    se = torch.sqrt(p * (1 - p) / many.n)
    assert bool(((many.freqs - p).abs() <= 5 * se + 1e-3).all())
    assert int(many.counts[pipe.probs == 0].sum()) == 0  # filtered tokens are never drawn
    # a wrong distribution is caught by the same tolerance
    wrong = torch.roll(p, 1)
    assert not bool(((many.freqs - wrong).abs() <= 5 * se + 1e-3).all())


def test_draw_many_caps_n():
    probs = torch.softmax(_logits(8), dim=-1)
    many = sg.draw_many(probs, 10**9, seed=0)
    assert many.capped and many.n == sg.MAX_DRAWS
    assert sg.draw_many(probs, 0, seed=0).n == 1


def test_temperature_sweep_is_monotone():
    logits = _logits(9)
    sweep = sg.temperature_sweep(logits)
    assert sweep.temperatures[0] == 0.05 and sweep.temperatures[-1] == 3.0
    assert all(b >= a - 1e-9 for a, b in zip(sweep.entropy_bits, sweep.entropy_bits[1:]))
    assert all(b <= a + 1e-9 for a, b in zip(sweep.top_prob, sweep.top_prob[1:]))
    assert all(b >= a for a, b in zip(sweep.cover, sweep.cover[1:]))
    i = sweep.temperatures.index(1.0)
    probs = torch.softmax(logits, dim=-1)
    assert sweep.entropy_bits[i] == pytest.approx(sampling.entropy_bits(probs), rel=1e-5)
    assert sweep.cover[i] == sg.tokens_to_cover(probs, 0.9)


def test_strategies_side_by_side():
    rows = sg.compare_strategies(_logits(10), sg.default_strategies(min_p=0.05))
    by = {r.name: r for r in rows}
    assert by["greedy"].kept == 1 and by["greedy"].entropy_bits == 0.0
    assert by["top-k 40"].kept == 40
    assert by["temperature 0.7"].entropy_bits < by["temperature 1.0"].entropy_bits < by["temperature 1.5"].entropy_bits
    assert by["top-p 0.9"].kept < VOCAB and by["min-p 0.05"].kept < VOCAB


def test_figures_show_removed_tokens_greyed_and_change_with_settings():
    logits = _logits(11)
    ids = sg.top_token_ids(logits, 15)
    labels = [f"t{i}<b>" for i in ids]
    a = sg.run_pipeline(logits, SamplingConfig(temperature=0.9, top_k=5, top_p=0.9, min_p=0.02))
    fig = pipeline_figure(a, ids, labels, chosen=ids[0])
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == len(a.stages) + 1  # one panel per stage + the renormalised one
    topk_panel = bars[[s.name for s in a.stages].index(sg.TOP_K)]
    assert list(topk_panel.marker.color[5:]) == [REMOVED_COLOR] * 10
    assert all("<b>" not in t for t in fig.layout.xaxis.ticktext)  # labels are escaped
    b = sg.run_pipeline(logits, SamplingConfig(temperature=0.9, top_k=8))
    assert pipeline_figure(b, ids, labels).to_json() != fig.to_json()
    draw = sg.inverse_cdf_draw(a.probs, 1)
    assert any(t.name == "drawn token" for t in draw_figure(draw, a.probs, {}).data)
    assert strategies_figure(sg.compare_strategies(logits, sg.default_strategies()), ids, labels).data
    assert len(sweep_figure(sg.temperature_sweep(logits), 0.7).data) == 3
    assert len(draws_figure(ids, labels, a.probs, sg.draw_many(a.probs, 100, 0)).data) == 2


# ---------------------------------------------------------------- continuations (tiny model)
def test_distinct_and_repetition():
    assert distinct_n([[1, 2, 3], [1, 2, 4]], 1) == pytest.approx(4 / 6)
    assert distinct_n([[1, 2, 3], [1, 2, 4]], 2) == pytest.approx(3 / 4)
    assert repetition_rate([5, 6, 7, 5, 6, 7, 5, 6, 7]) == pytest.approx(4 / 7)
    assert repetition_rate([1, 2, 3, 4, 5]) == 0.0


def test_continuations_equal_generate_sampling(tiny):
    session = Session(tiny, "The cat sat on the")
    session.prefill()
    cfg = SamplingConfig(temperature=1.3, top_k=50, seed=5)
    before = session.cache_len
    res = sample_continuations(tiny, session.ids, cfg, k=4, m=10, seed=5, cache=session.cache,
                               first_logits=session.pending_logits)
    assert session.cache_len == before  # the session's cache is copied, never touched
    torch.manual_seed(5)
    out = tiny.model.generate(torch.tensor([session.ids]), do_sample=True, temperature=1.3, top_k=50,
                              max_new_tokens=10, num_return_sequences=4, top_p=1.0)
    pad = tiny.tokenizer.pad_token_id
    for row, cont in zip(out[:, session.prompt_len:].tolist(), res.items):
        if cont.ended_with_eos:
            row = row[:len(cont.token_ids)]
        assert row[:len(cont.token_ids)] == cont.token_ids and all(t == pad for t in row[len(cont.token_ids):])
    assert res.forward_passes <= 10
    assert all(len(c.logprobs) == len(c.token_ids) for c in res.items)


def test_greedy_continuations_are_identical(tiny):
    res = sample_continuations(tiny, tiny.tokenizer("Once upon a time")["input_ids"], SamplingConfig(temperature=0),
                               k=3, m=8)
    assert res.n_unique == 1 and res.forward_passes >= 2  # prefill + decode steps


def test_draw_figure_shows_a_far_tail_draw_with_a_gap():
    probs = torch.softmax(torch.zeros(200), dim=-1)  # uniform: u lands deep in the list
    draw = sg.inverse_cdf_draw(probs, 0)
    assert draw.position > 30
    fig = draw_figure(draw, probs, {}, max_show=25)
    assert "…" in fig.layout.xaxis.ticktext
    star = [t for t in fig.data if t.name == "drawn token"][0]
    assert fig.layout.xaxis.ticktext[star.x[0]].startswith(f"#{draw.position + 1}")
