"""K sampled continuations of one context at once: a batch of K rows on one KV cache.

Each decode step is one ``decode.forward`` for all K sequences and one ``decode.choose`` on the
[K, vocab] batch (transformers' processors, then ``torch.multinomial`` on a seeded generator): the
calls ``generate(do_sample=True, num_return_sequences=K)`` makes, so after ``torch.manual_seed``
both give the same sequences. A row that produced EOS is padded afterwards, as in ``generate``.
Then a few numbers tell greedy's loops from high temperature's drift.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.loading import ModelBundle
from autoreg_core.engine.loop import Feed, generation_loop
from autoreg_core.engine.prefix import Prefix
from autoreg_core.engine.tokens import sequence_text
from autoreg_core.runtime import batcher

MAX_CONTINUATIONS = 8
MAX_CONTINUATION_TOKENS = 64


@dataclass
class Continuation:
    token_ids: list[int]  # generated ids (EOS included, padding excluded)
    logprobs: list[float]  # log p(token | prefix) under the model's raw softmax
    text: str
    ended_with_eos: bool

    @property
    def logprob(self) -> float:
        return float(sum(self.logprobs))

    @property
    def perplexity(self) -> float:
        return math.exp(-self.logprob / len(self.logprobs)) if self.logprobs else float("nan")

    @property
    def repetition_rate(self) -> float:
        return repetition_rate(self.token_ids)


@dataclass
class ContinuationSet:
    name: str
    config: SamplingConfig
    items: list[Continuation]
    steps: int
    forward_passes: int  # decode passes this call ran (the prefix's prefill is not counted)
    time_ms: float

    @property
    def distinct_2(self) -> float:
        return distinct_n([c.token_ids for c in self.items], 2)

    @property
    def mean_repetition(self) -> float:
        return sum(c.repetition_rate for c in self.items) / max(len(self.items), 1)

    @property
    def mean_logprob(self) -> float:
        return sum(c.logprob for c in self.items) / max(len(self.items), 1)

    @property
    def n_unique(self) -> int:
        return len({tuple(c.token_ids) for c in self.items})


def distinct_n(seqs: list[list[int]], n: int) -> float:
    """Distinct n-grams over all n-grams of all the sequences (1 = no n-gram ever repeats)."""
    grams = [tuple(s[i:i + n]) for s in seqs for i in range(len(s) - n + 1)]
    return len(set(grams)) / len(grams) if grams else float("nan")


def repetition_rate(ids: list[int], n: int = 3) -> float:
    """Share of a sequence's n-grams that already occurred earlier in it (loops score high)."""
    seen, repeats, total = set(), 0, 0
    for i in range(len(ids) - n + 1):
        gram = tuple(ids[i:i + n])
        total += 1
        if gram in seen:
            repeats += 1
        seen.add(gram)
    return repeats / total if total else 0.0


def sample_continuations(bundle: ModelBundle, prefix: Prefix, config: SamplingConfig, k: int = 5, m: int = 30,
                         name: str = "", on_step: Callable[[int, int], None] | None = None) -> ContinuationSet:
    """K continuations of up to M tokens under ``config`` (seeded by ``config.seed``), one forward per step.

    The prefix's cache is copied, never modified. ``on_step(done, m)`` reports progress.
    """
    k = int(min(max(int(k), 1), MAX_CONTINUATIONS))
    m = int(min(max(int(m), 1), MAX_CONTINUATION_TOKENS))
    config, _ = config.normalized(bundle.spec.vocab)
    t0 = time.perf_counter()
    cache = decode.copy_cache(prefix.cache, bundle)
    cache.batch_repeat_interleave(k)
    eos, pad = set(bundle.eos_token_ids), bundle.pad_id
    gen = torch.Generator(device="cpu").manual_seed(int(config.seed))
    seqs = torch.tensor([list(prefix.ids)] * k, dtype=torch.long)
    logits = prefix.logits.float().view(1, -1).repeat(k, 1)
    alive = torch.ones(k, dtype=torch.bool)
    rows: list[list[int]] = [[] for _ in range(k)]
    row_logprobs: list[list[float]] = [[] for _ in range(k)]
    forwards = steps = 0
    while steps < m and bool(alive.any()):
        if steps:
            logits = decode.forward(bundle, seqs[:, -1:], cache).logits
            forwards += 1
        picked = decode.choose(logits, seqs, config, gen).token_id
        picked = torch.where(alive, picked, torch.full_like(picked, pad))
        for i in torch.nonzero(alive).flatten().tolist():
            rows[i].append(int(picked[i]))
            row_logprobs[i].append(decode.logprob_of(logits[i], int(picked[i])))
        alive = alive & ~torch.isin(picked, torch.tensor(sorted(eos), dtype=torch.long))
        seqs = torch.cat([seqs, picked.view(-1, 1)], dim=1)
        steps += 1
        if on_step is not None:
            on_step(steps, m)
    items = [Continuation(ids, lps, sequence_text(bundle.tokenizer, ids), bool(ids) and ids[-1] in eos)
             for ids, lps in zip(rows, row_logprobs)]
    return ContinuationSet(name=name, config=config, items=items, steps=steps, forward_passes=forwards,
                           time_ms=(time.perf_counter() - t0) * 1000.0)


def shared_feed(bundle) -> Feed:
    """Decode passes through the model's cross-tab batcher: many tabs drawing at once share passes."""
    shared_batcher = batcher.batcher_for(bundle)

    def feed(cache, token: int) -> tuple[torch.Tensor, float]:
        shared = shared_batcher.decode(cache, token)
        return shared.logits, shared.ms
    return feed


def draw_one(bundle: ModelBundle, prefix: Prefix, config: SamplingConfig, n: int, seed: int,
             batched: bool = False) -> list[int]:
    """One continuation of up to ``n`` tokens after ``prefix`` under ``config``, drawn with its own ``seed``.

    What one student's tab draws when the whole class samples from the teacher's text: the prefix's
    cache is copied (never touched), the draw ends early on EOS, and the decode passes go through the
    batcher when ``batched`` (a server with batching on), so thirty tabs drawing at once share passes.
    The same seed gives the same tokens as ``sample_continuations`` with k = 1.
    """
    n = int(min(max(int(n), 1), MAX_CONTINUATION_TOKENS))
    config, _ = config.normalized(bundle.spec.vocab)
    cache = decode.copy_cache(prefix.cache, bundle)
    generator = torch.Generator(device="cpu").manual_seed(int(seed))
    steps = generation_loop(bundle, cache, list(prefix.ids), prefix.logits, n, config, generator,
                            eos=set(bundle.eos_token_ids), feed=shared_feed(bundle) if batched else None)
    return [step.token for step in steps]
