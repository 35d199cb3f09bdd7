"""decode's sampling pipeline and draw, which the sampling lab shows stage by stage."""
import math
import time

import pytest
import torch
from transformers import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode
from autoreg_core.engine.decode import entropy_bits, process, rank_of

VOCAB = 500


def _logits(seed=0, vocab=VOCAB, scale=3.0, rows=None):
    g = torch.Generator().manual_seed(seed)
    shape = (vocab,) if rows is None else (rows, vocab)
    return torch.randn(shape, generator=g) * scale


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
def test_each_stage_equals_transformers_warper(cfg):
    logits, ctx = _logits(1), torch.tensor([3, 7, 7, 42, 99])
    pipe = decode.process(logits, ctx, cfg)
    assert _same(pipe.stage(decode.RAW).scores, logits)
    expect = logits.clone()
    if cfg.repetition_penalty != 1.0:
        expect = _apply(RepetitionPenaltyLogitsProcessor(cfg.repetition_penalty), ctx, expect)
        assert _same(pipe.stage(decode.REPETITION).scores, expect)
    else:
        assert pipe.stage(decode.REPETITION) is None
    steps = [(decode.TEMPERATURE, cfg.temperature != 1.0, lambda: TemperatureLogitsWarper(cfg.temperature)),
             (decode.TOP_K, bool(cfg.top_k), lambda: TopKLogitsWarper(cfg.top_k)),
             (decode.TOP_P, cfg.top_p < 1.0, lambda: TopPLogitsWarper(cfg.top_p)),
             (decode.MIN_P, cfg.min_p > 0, lambda: MinPLogitsWarper(cfg.min_p))]
    for name, on, warper in steps:
        if on:
            expect = _apply(warper(), ctx, expect)
        stage = pipe.stage(name)
        assert stage.active == on and _same(stage.scores, expect), name
    assert _same(pipe.final_scores, expect)
    assert torch.allclose(pipe.probs, torch.softmax(expect, dim=-1))


def test_stages_do_what_their_definitions_say():
    logits = _logits(2)
    pipe = decode.process(logits, None, SamplingConfig(temperature=0.8, top_k=60, top_p=0.7, min_p=0.1))
    assert torch.allclose(pipe.stage(decode.TEMPERATURE).scores, logits / 0.8)  # plain arithmetic
    top_k = pipe.stage(decode.TOP_K)
    assert top_k.kept == 60
    assert set(top_k.removed_ids.tolist()) == set(torch.topk(logits, VOCAB).indices[60:].tolist())
    # nucleus: the kept set reaches p, and without its least likely member it would not
    entering, top_p = top_k.probs, pipe.stage(decode.TOP_P)
    kept = torch.nonzero(top_p.scores > -math.inf).flatten()
    mass = float(entering[kept].sum())
    assert mass >= 0.7 - 1e-6 and mass == pytest.approx(top_p.threshold)
    assert mass - float(entering[kept].min()) < 0.7
    # min-p: every survivor is at least min_p × the top probability of what entered
    entering, survivors = top_p.probs, pipe.probs > 0
    assert pipe.stage(decode.MIN_P).threshold == pytest.approx(0.1 * float(entering.max()))
    assert bool((entering[survivors] >= 0.1 * entering.max() - 1e-7).all())
    assert bool((entering[~survivors & (entering > 0)] < 0.1 * entering.max()).all())
    # bookkeeping: every id is kept, or removed by exactly one stage
    removed_by = pipe.removed_by()
    assert int((removed_by < 0).sum()) == pipe.kept
    for k, stage in enumerate(pipe.stages):
        assert set(stage.removed_ids.tolist()) == set(torch.nonzero(removed_by == k).flatten().tolist())
    assert pipe.probs.sum().item() == pytest.approx(1.0, abs=1e-5)


def test_greedy_is_temperature_zero():
    logits = _logits(3)
    pipe = decode.process(logits, None, SamplingConfig(temperature=0.0, top_k=5, top_p=0.5))
    assert pipe.greedy and pipe.kept == 1 and int(torch.argmax(pipe.probs)) == int(torch.argmax(logits))
    assert [s.name for s in pipe.stages] == [decode.RAW, decode.ARGMAX]
    choice = decode.choose(logits, None, SamplingConfig(temperature=0.0), generator=None)
    assert choice.token_id == int(torch.argmax(logits)) and choice.draw is None


@pytest.mark.parametrize("t", [1e-3, 1e-20, 1e-44])
def test_tiny_temperature_never_blows_up(t):
    logits = _logits(4) * 10
    pipe = decode.process(logits, None, SamplingConfig(temperature=t))
    assert not bool(torch.isnan(pipe.probs).any())
    assert int(torch.argmax(pipe.probs)) == int(torch.argmax(logits))
    assert pipe.probs.max().item() == pytest.approx(1.0, abs=1e-4)
    assert pipe.greedy == (t < 1e-30)  # logits ÷ T overflows float32 only for the tiniest: that is greedy
    assert any("overflow" in n for n in pipe.notes) == (t < 1e-30)


def test_bad_filter_values_are_clamped_with_a_note():
    logits = _logits(5)
    assert decode.process(logits, None, SamplingConfig(top_p=0.0)).kept == 1
    assert decode.process(logits, None, SamplingConfig(top_p=1.0)).kept == VOCAB
    assert decode.process(logits, None, SamplingConfig(top_k=0)).kept == VOCAB
    big = decode.process(logits, None, SamplingConfig(top_k=VOCAB + 10))
    assert big.kept == VOCAB and any("larger than the vocabulary" in n for n in big.notes)
    tied = logits.clone()
    tied[[10, 20]] = tied.max() + 1
    assert decode.process(tied, None, SamplingConfig(min_p=1.0)).kept_ids.tolist() == [10, 20]
    neg = decode.process(logits, None, SamplingConfig(temperature=-1, top_p=2.0, min_p=-0.5))
    assert neg.greedy and len(neg.notes) == 3


@pytest.mark.parametrize("bad", [torch.full((VOCAB,), -math.inf), torch.full((VOCAB,), math.nan)])
@pytest.mark.parametrize("cfg", [SamplingConfig(), SamplingConfig(temperature=0.0),
                                 SamplingConfig(top_k=3, top_p=0.5)])
def test_everything_filtered_falls_back_to_the_top_token(bad, cfg):
    pipe = decode.process(bad, None, cfg)
    assert pipe.fallback and pipe.kept == 1 and any("falling back" in n for n in pipe.notes)
    assert pipe.stages[-1].name == decode.FALLBACK
    assert not bool(torch.isnan(pipe.probs).any()) and float(pipe.probs.sum()) == pytest.approx(1.0)
    picked = decode.draw(pipe.probs, torch.Generator().manual_seed(0), decode.INVERSE_CDF)
    assert picked.token_id == int(pipe.kept_ids[0])


def test_a_filter_that_removes_everything_in_one_row_only_rescues_that_row():
    logits = _logits(6, rows=2)
    logits[1] = -math.inf
    pipe = decode.process(logits, None, SamplingConfig(top_k=5))
    assert pipe.fallback and pipe.kept.tolist() == [5, 1]


def test_batch_rows_behave_like_single_rows():
    logits, ctx = _logits(7, rows=3), torch.tensor([[1, 2, 3], [4, 4, 4], [9, 8, 7]])
    cfg = SamplingConfig(temperature=0.9, top_k=40, top_p=0.8, min_p=0.02, repetition_penalty=1.2)
    batch = decode.process(logits, ctx, cfg)
    for i in range(3):
        alone = decode.process(logits[i], ctx[i], cfg)
        assert [s.name for s in batch.stages] == [s.name for s in alone.stages]
        for b_stage, a_stage in zip(batch.stages, alone.stages):
            assert _same(b_stage.scores[i], a_stage.scores) and torch.allclose(b_stage.probs[i], a_stage.probs)
            assert torch.equal(b_stage.removed[i], a_stage.removed)
        assert int(batch.kept[i]) == alone.kept
    # the batch draw is one torch.multinomial over the rows, as generate makes it
    picked = decode.choose(logits, ctx, cfg, torch.Generator().manual_seed(3)).token_id
    expect = torch.multinomial(batch.probs, 1, generator=torch.Generator().manual_seed(3))[:, 0]
    assert picked.tolist() == expect.tolist() and picked.shape == (3,)
    greedy = decode.choose(logits, ctx, SamplingConfig(temperature=0)).token_id
    assert greedy.tolist() == torch.argmax(logits, dim=-1).tolist()


def test_the_draw_is_generates_multinomial_and_can_be_undone():
    probs = decode.process(_logits(8), None, SamplingConfig(top_k=30)).probs
    gen = torch.Generator().manual_seed(11)
    first = decode.draw(probs, gen)
    assert first.method == decode.MULTINOMIAL and first.u is None
    assert first.token_id == int(torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(11)))
    gen.set_state(first.generator_state)  # restoring the state replays the same draw
    assert decode.draw(probs, gen).token_id == first.token_id


def test_inverse_cdf_lands_in_the_kept_set():
    pipe = decode.process(_logits(9), None, SamplingConfig(temperature=1.2, top_k=30, top_p=0.8))
    kept = set(pipe.kept_ids.tolist())
    order, cdf = decode.cumulative(pipe.probs)
    assert set(order.tolist()) == kept and len(order) == len(kept) and float(cdf[-1]) == 1.0
    assert bool((pipe.probs[order][:-1] >= pipe.probs[order][1:]).all())  # most likely first
    gen, seen = torch.Generator().manual_seed(0), set()
    for _ in range(300):
        d = decode.draw(pipe.probs, gen, decode.INVERSE_CDF)
        pos = order.tolist().index(d.token_id)
        low = 0.0 if pos == 0 else float(cdf[pos - 1])
        assert d.method == decode.INVERSE_CDF and low <= d.u < float(cdf[pos])
        seen.add(d.token_id)
    assert len(seen) > 3  # it really samples
    with pytest.raises(ValueError):
        decode.cumulative(torch.zeros(VOCAB))


def test_forcing_a_token_keeps_the_pipeline_and_checks_the_id():
    logits = _logits(10)
    choice = decode.choose(logits, None, SamplingConfig(top_k=3), torch.Generator(), force_token=7)
    assert choice.forced and choice.token_id == 7 and choice.draw is None and choice.pipeline.kept == 3
    with pytest.raises(ValueError, match="outside the vocabulary"):
        decode.choose(logits, None, SamplingConfig(), torch.Generator(), force_token=VOCAB)


def test_log_probs_for_beams_use_only_the_repetition_penalty():
    logits, ctx = _logits(12, rows=2), torch.tensor([[1, 2], [3, 3]])
    plain = decode.log_probs(logits, ctx, SamplingConfig(temperature=0.3, top_k=2))
    assert torch.allclose(plain, torch.log_softmax(logits, dim=-1))
    penalised = decode.log_probs(logits, ctx, SamplingConfig(repetition_penalty=1.5))
    expect = RepetitionPenaltyLogitsProcessor(1.5)(ctx, torch.log_softmax(logits, dim=-1))
    assert torch.allclose(penalised, expect) and not torch.allclose(penalised, plain)


def test_every_pass_runs_inside_the_bundles_gate_and_its_ms_start_inside(tiny):
    """The engine's one hook for a host's limits: ``decode.forward`` enters ``bundle.forward_gate`` around the
    model call, and a wait at the gate is not part of the pass's ms."""
    import contextlib
    import dataclasses

    entered = []

    @contextlib.contextmanager
    def gate():
        entered.append("in")
        time.sleep(0.3)  # a wait for a slot
        yield
        entered.append("out")

    gated = dataclasses.replace(tiny, forward_gate=gate)
    fwd = decode.forward(gated, [1, 2, 3], decode.new_cache(gated))
    assert entered == ["in", "out"] and fwd.ms < 300
    assert tiny.forward_gate is contextlib.nullcontext  # a notebook's bundle: no gate


def test_pipeline_stages_run_in_generates_order_and_greedy_skips_the_warpers():
    def active(cfg):
        return [s.name for s in process(torch.randn(300), [4, 5], cfg).stages if s.active]

    assert active(SamplingConfig(temperature=0, top_k=5, top_p=0.5)) == ["raw logits", "greedy"]
    assert active(SamplingConfig(temperature=0.5, top_k=3, top_p=0.9, min_p=0.1, repetition_penalty=1.1)) == [
        "raw logits", "repetition penalty", "temperature", "top-k", "top-p", "min-p"]
    assert active(SamplingConfig(temperature=1.0, top_k=0, top_p=1.0)) == ["raw logits"]


def test_entropy_and_rank():
    probs = torch.tensor([0.5, 0.25, 0.25, 0.0])
    assert entropy_bits(probs) == pytest.approx(1.5)
    assert rank_of(probs, 0) == 1 and rank_of(probs, 2) == 2 and rank_of(probs, 3) == 4
