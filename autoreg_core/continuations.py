"""K sampled continuations of one context at once: a batch of K rows on one KV cache.

Each decode step is one forward pass for all K sequences, with transformers' processors
(``sampling.build_processors``) and ``torch.multinomial`` on a seeded generator, exactly the calls
``generate(do_sample=True, num_return_sequences=K)`` makes. A row that produced EOS is padded
afterwards, as in ``generate``. Then a few numbers tell greedy's loops from high temperature's drift.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import torch

from . import sampling
from .beam import clone_cache, prefill_context
from .config import SamplingConfig
from .loading import ModelBundle
from .tokens import sequence_text

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
    forward_passes: int
    time_ms: float

    @property
    def distinct_1(self) -> float:
        return distinct_n([c.token_ids for c in self.items], 1)

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


def sample_continuations(bundle: ModelBundle, context_ids: list[int], config: SamplingConfig, k: int = 5,
                         m: int = 30, seed: int = 0, name: str = "", cache=None,
                         first_logits: torch.Tensor | None = None,
                         on_step: Callable[[int, int], None] | None = None) -> ContinuationSet:
    """K continuations of up to M tokens under ``config``, seeded, one forward per step for all K.

    ``cache`` + ``first_logits`` (a session's) skip the prefill; the cache is copied, not modified.
    """
    k = int(min(max(int(k), 1), MAX_CONTINUATIONS))
    m = int(min(max(int(m), 1), MAX_CONTINUATION_TOKENS))
    config, _ = config.normalized(bundle.vocab_size)
    t0 = time.perf_counter()
    forwards = 0
    if cache is None or first_logits is None:
        cache, first_logits = prefill_context(bundle, context_ids)
        forwards += 1
    else:
        cache = clone_cache(cache, bundle.config)
    cache.batch_repeat_interleave(k)
    eos = set(bundle.eos_token_ids)
    pad = bundle.tokenizer.pad_token_id
    pad = int(pad) if pad is not None else (min(eos) if eos else 0)
    procs = sampling.build_processors(config)
    gen = torch.Generator(device="cpu").manual_seed(int(seed))

    seqs = torch.tensor([list(context_ids)] * k, dtype=torch.long)
    logits = first_logits.float().view(1, -1).repeat(k, 1)
    alive = torch.ones(k, dtype=torch.bool)
    out_ids: list[list[int]] = [[] for _ in range(k)]
    out_lps: list[list[float]] = [[] for _ in range(k)]
    ended = [False] * k
    steps = 0
    for step in range(m):
        scores = procs(seqs, logits.clone())
        if config.greedy:
            nxt = torch.argmax(scores, dim=-1)
        else:
            probs = torch.softmax(scores, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen).squeeze(1)
        nxt = torch.where(alive, nxt, torch.full_like(nxt, pad))
        logp = torch.log_softmax(logits.double(), dim=-1).gather(1, nxt.view(-1, 1)).squeeze(1)
        for i in range(k):
            if bool(alive[i]):
                out_ids[i].append(int(nxt[i]))
                out_lps[i].append(float(logp[i]))
                if int(nxt[i]) in eos:
                    ended[i] = True
        alive = alive & ~torch.tensor([int(t) in eos for t in nxt.tolist()])
        seqs = torch.cat([seqs, nxt.view(-1, 1)], dim=1)
        steps = step + 1
        if on_step is not None:
            on_step(steps, m)
        if not bool(alive.any()) or step == m - 1:
            break
        with torch.inference_mode():
            out = bundle.model(input_ids=nxt.view(-1, 1).to(bundle.device), past_key_values=cache, use_cache=True)
        cache = out.past_key_values
        logits = out.logits[:, -1].float().cpu()
        forwards += 1
    items = [Continuation(ids, lps, sequence_text(bundle.tokenizer, ids), eos_hit)
             for ids, lps, eos_hit in zip(out_ids, out_lps, ended)]
    return ContinuationSet(name=name or "", config=config, items=items, steps=steps, forward_passes=forwards,
                           time_ms=(time.perf_counter() - t0) * 1000.0)
