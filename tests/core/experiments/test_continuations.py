"""K continuations on one batched cache equal generate(do_sample=True, num_return_sequences=K)."""
from dataclasses import replace

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine import prefix
from autoreg_core.experiments.continuations import (
    MAX_CONTINUATIONS,
    distinct_n,
    draw_one,
    repetition_rate,
    sample_continuations,
)


def _generate(bundle, ids, cfg, k, m):
    torch.manual_seed(cfg.seed)
    out = bundle.model.generate(torch.tensor([list(ids)]), do_sample=True, temperature=cfg.temperature,
                                top_k=cfg.top_k, top_p=cfg.top_p, min_p=cfg.min_p or None,
                                repetition_penalty=cfg.repetition_penalty, max_new_tokens=m,
                                num_return_sequences=k)
    return out[:, len(ids):].tolist()


def _assert_same_as_generate(bundle, res, rows):
    pad = bundle.tokenizer.pad_token_id
    assert len(rows) == len(res.items)
    assert all(len(row) == res.steps for row in rows)  # generate stops when every row has ended, as we do
    for row, cont in zip(rows, res.items):
        assert row == cont.token_ids + [pad] * (len(row) - len(cont.token_ids))
        assert len(cont.logprobs) == len(cont.token_ids)
        assert cont.ended_with_eos == (cont.token_ids[-1] in bundle.eos_token_ids)


def test_distinct_and_repetition():
    assert distinct_n([[1, 2, 3], [1, 2, 4]], 1) == pytest.approx(4 / 6)
    assert distinct_n([[1, 2, 3], [1, 2, 4]], 2) == pytest.approx(3 / 4)
    assert repetition_rate([5, 6, 7, 5, 6, 7, 5, 6, 7]) == pytest.approx(4 / 7)
    assert repetition_rate([1, 2, 3, 4, 5]) == 0.0


@pytest.mark.parametrize("cfg", [
    SamplingConfig(temperature=1.3, top_k=50, seed=5),
    SamplingConfig(temperature=0.8, top_k=20, top_p=0.9, min_p=0.05, repetition_penalty=1.3, seed=9),
])
def test_continuations_equal_generate_sampling(tiny, cfg):
    session = Session(tiny, "The cat sat on the")
    session.prefill()
    before = (session.cache_len, session.cache.layers[0].keys.clone())
    res = sample_continuations(tiny, prefix.of_session(session), cfg, k=4, m=10)
    assert session.cache_len == before[0] and torch.equal(session.cache.layers[0].keys, before[1])
    _assert_same_as_generate(tiny, res, _generate(tiny, session.ids, cfg, 4, 10))
    assert res.steps == 10 and res.forward_passes == 9  # one pass per step after the first, no prefill
    assert res.config == cfg


def test_a_row_that_ends_is_padded_like_generate(tiny, monkeypatch):
    cfg = SamplingConfig(temperature=1.3, top_k=50, seed=5)
    start = prefix.prefill(tiny, tiny.tokenizer("Once upon a time")["input_ids"])
    first = sample_continuations(tiny, start, cfg, k=4, m=10)
    stop = first.items[0].token_ids[2]  # make row 0's third token an EOS
    monkeypatch.setattr(tiny.model.generation_config, "eos_token_id", [tiny.tokenizer.eos_token_id, stop])
    res = sample_continuations(tiny, start, cfg, k=4, m=10)
    assert res.items[0].ended_with_eos and len(res.items[0].token_ids) <= 3
    _assert_same_as_generate(tiny, res, _generate(tiny, start.ids, cfg, 4, 10))


def test_greedy_continuations_are_identical_and_the_settings_are_clamped(tiny):
    start = prefix.prefill(tiny, tiny.tokenizer("Once upon a time")["input_ids"])
    res = sample_continuations(tiny, start, SamplingConfig(temperature=0), k=3, m=8)
    assert res.n_unique == 1 and len(res.items) == 3 and res.forward_passes == res.steps - 1
    assert res.mean_logprob == pytest.approx(res.items[0].logprob)
    big = sample_continuations(tiny, start, SamplingConfig(temperature=0), k=100, m=1)
    assert len(big.items) == MAX_CONTINUATIONS and big.steps == 1 and big.forward_passes == 0


def test_logprobs_are_the_raw_softmax_of_each_token(tiny):
    session = Session(tiny, "A bird")
    res = sample_continuations(tiny, prefix.of_session(session), SamplingConfig(temperature=0), k=1, m=4)
    records = session.generate(4, SamplingConfig(temperature=0, max_new_tokens=4))
    assert res.items[0].token_ids == [r.token_id for r in records] and len(records) == 4
    assert res.items[0].logprobs == pytest.approx([r.logprob for r in records], abs=1e-4)
    seen = []
    sample_continuations(tiny, prefix.of_session(session), SamplingConfig(temperature=0), k=1, m=3,
                         on_step=lambda done, m: seen.append((done, m)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("batched", [False, True])
def test_one_students_draw_equals_generate_with_its_seed(tiny, batched):
    """draw_one (what each student's tab draws in a class) is generate(do_sample=True) after manual_seed(seed),
    through the batcher or solo, and it leaves the lent prefix's cache as it was."""
    cfg = SamplingConfig(temperature=1.2, top_k=30, top_p=0.95, seed=0)
    pre = prefix.prefill(tiny, tiny.tokenizer.encode("The cat sat on the"))
    before = pre.cache.get_seq_length()
    for seed in (3, 11, 12345):
        drawn = draw_one(tiny, pre, replace(cfg, seed=seed), 6, seed, batched=batched)
        row = _generate(tiny, pre.ids, replace(cfg, seed=seed), 1, 6)[0]
        eos = [i for i, t in enumerate(row) if t in tiny.eos_token_ids]
        assert drawn == (row[:eos[0] + 1] if eos else row)
    assert pre.cache.get_seq_length() == before
    assert draw_one(tiny, pre, cfg, 6, 3, batched=batched) != draw_one(tiny, pre, cfg, 6, 4, batched=batched)
