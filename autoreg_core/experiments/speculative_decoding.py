"""Speculative decoding: a cheap draft proposes k tokens, the model checks them all in one pass.

Plain decoding pays one full forward pass per token. Here a **draft** guesses the next k tokens;
the model then reads the last token plus the k guesses in a single **verify** pass, which gives
its own distribution p at every one of those k + 1 positions. Going left to right, guess d with
draft probability q(d) is kept with probability min(1, p(d) / q(d)); the first rejected guess is
replaced by a token drawn from the residual max(0, p − q), renormalised, and the round ends. If
every guess is kept, the last position gives one more token for free. This rule makes every
emitted token follow p exactly (Leviathan et al., 2023), so the output is the model's own: with
greedy settings it is token for token what plain greedy decoding writes.

Drafts that need no second model: **prompt lookup** (the continuation of the last n-gram where it
already occurred in the context; transformers' ``PromptLookupCandidateGenerator`` finds it) and an
**early-exit self-draft** (the first layers of the same model, then its final norm and LM head).
Any model that shares the tokenizer can draft too (``ModelDraft``).
"""
from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import torch
from transformers.generation.candidate_generator import PromptLookupCandidateGenerator

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.loop import generation_loop

MAX_DRAFT = 8
MAX_NEW = 128
PROMPT_LOOKUP, EARLY_EXIT = "prompt lookup", "early exit"


def check_draft_length(k: int) -> int:
    if int(k) != k or not 1 <= k <= MAX_DRAFT:
        raise ValueError(f"The draft length must be a whole number from 1 to {MAX_DRAFT}; got {k!r}.")
    return int(k)


# ---------------------------------------------------------------- the accept rule, one small function each
def accept_probability(probs: torch.Tensor, draft_probs: torch.Tensor, token: int) -> float:
    """min(1, p(d) / q(d)): how likely the model keeps the draft's guess d."""
    q = float(draft_probs[token])
    return 1.0 if q <= 0.0 else min(1.0, float(probs[token]) / q)


def residual(probs: torch.Tensor, draft_probs: torch.Tensor) -> torch.Tensor:
    """max(0, p − q), renormalised: what is drawn after a rejection (p itself if p equals q)."""
    rest = (probs.double() - draft_probs.double()).clamp_min(0.0)
    total = float(rest.sum())
    return (rest / total).float() if total > 0 else probs


def one_hot(token: int, vocab: int) -> torch.Tensor:
    """The distribution of a draft that always proposes ``token`` (prompt lookup, a greedy draft)."""
    out = torch.zeros(vocab)
    out[token] = 1.0
    return out


def speculative_token(probs: torch.Tensor, draft_probs: torch.Tensor, token: int,
                      generator: torch.Generator | None) -> tuple[int, bool]:
    """One position of a verify pass: (the token emitted, whether it is the draft's guess).

    Keeps the guess with probability min(1, p/q) (no random number is used when that is 0 or 1,
    so greedy runs consume none), else draws from the residual with ``decode.draw``.
    """
    keep = accept_probability(probs, draft_probs, token)
    if keep >= 1.0 or (keep > 0.0 and float(torch.rand(1, generator=generator)) < keep):
        return int(token), True
    return int(decode.draw(residual(probs, draft_probs), generator).token_id), False


# ---------------------------------------------------------------- drafts
@dataclass(frozen=True)
class Proposal:
    """The draft's guesses and, for a model draft, its distribution at each (None: one-hot guesses)."""

    tokens: list[int]
    probs: list[torch.Tensor] | None = None


class Draft(Protocol):
    name: str

    def propose(self, context: list[int], k: int, config: SamplingConfig,
                generator: torch.Generator | None) -> Proposal: ...

    def keep(self, length: int) -> None: ...


class PromptLookup:
    """Guesses by copying: where the last ``ngram`` tokens occurred before, propose what followed."""

    def __init__(self, ngram: int = 2):
        self.ngram = int(ngram)
        self.name = f"{PROMPT_LOOKUP} ({self.ngram}-gram)"

    def propose(self, context: list[int], k: int, config: SamplingConfig,
                generator: torch.Generator | None) -> Proposal:
        finder = PromptLookupCandidateGenerator(num_output_tokens=k, max_matching_ngram_size=self.ngram,
                                                max_length=len(context) + k + 1)
        ids = torch.tensor([context], dtype=torch.long)
        found, _ = finder.get_candidates(ids)
        return Proposal(found[0, len(context):].tolist())

    def keep(self, length: int) -> None:
        """Nothing to forget: the draft holds no state."""


class ModelDraft:
    """A smaller model (or the first layers of the same one) writes the guesses with its own KV cache."""

    def __init__(self, bundle, name: str):
        self.bundle, self.name = bundle, name
        self.cache = decode.new_cache(bundle)

    def propose(self, context: list[int], k: int, config: SamplingConfig,
                generator: torch.Generator | None) -> Proposal:
        seen = self.cache.get_seq_length()
        feed, ctx = context[seen:], list(context)
        tokens, probs = [], []
        for _ in range(k):
            logits = decode.forward(self.bundle, [feed], self.cache).logits[0]
            choice = decode.choose(logits, ctx, config, generator)
            tokens.append(int(choice.token_id))
            probs.append(choice.pipeline.probs)
            ctx.append(tokens[-1])
            feed = [tokens[-1]]
        return Proposal(tokens, probs)

    def keep(self, length: int) -> None:
        """Forget cached positions past ``length`` (the rejected guesses)."""
        extra = self.cache.get_seq_length() - length
        if extra > 0:
            self.cache.crop(-extra)


def early_exit_bundle(bundle, layers: int):
    """The same model stopped after its first ``layers`` layers, then its final norm and LM head.

    Nothing is copied: the view shares every weight. Llama-style models loop over
    ``layers[: config.num_hidden_layers]``, so a view with its own config holding ``layers`` runs
    only those (transformers' early-exit assisted generation relies on the same loop).
    """
    total = bundle.spec.n_layers
    if not 1 <= layers < total:
        raise ValueError(f"An early exit needs 1 to {total - 1} of the model's {total} layers; got {layers}.")
    config = copy.deepcopy(bundle.config)
    config.num_hidden_layers = int(layers)
    if getattr(config, "layer_types", None):
        config.layer_types = list(config.layer_types)[:layers]
    prefix = bundle.model.base_model_prefix
    body = copy.copy(getattr(bundle.model, prefix))
    body.config = config
    view = copy.copy(bundle.model)
    view._modules = dict(bundle.model._modules)  # a shallow copy shares this dict: give the view its own
    view._modules[prefix] = body
    view.config = config
    return dataclasses.replace(bundle, model=view, name=f"{bundle.name}, first {layers} of {total} layers")


def same_tokenizer(target, draft_bundle):
    """``draft_bundle`` if its tokenizer is the target's (its guesses are read as the target's token ids)."""
    if target.tokenizer.get_vocab() != draft_bundle.tokenizer.get_vocab():
        raise ValueError(f"{draft_bundle.name} does not share {target.name}'s tokenizer, so it cannot draft for it.")
    return draft_bundle


def early_exit(bundle, layers: int) -> ModelDraft:
    return ModelDraft(early_exit_bundle(bundle, layers), f"{EARLY_EXIT} after layer {layers}")


# ---------------------------------------------------------------- plain decoding, the baseline
@dataclass
class Decoded:
    """Tokens written after a prompt and what it took: wall-clock and passes through the model."""

    tokens: list[int] = field(default_factory=list)
    ms: float = 0.0  # prefill included
    forward_passes: int = 0
    done: bool = False
    step_ms: list[float] = field(default_factory=list)  # plain decoding: each decode step's forward pass
    token_ms: list[float] = field(default_factory=list)  # plain decoding: each later token's pass and its choice


def _finish(tokens: list[int], eos: set[int], max_new: int) -> tuple[list[int], bool]:
    """Tokens cut after the first EOS and at ``max_new``; whether generation is over."""
    for i, token in enumerate(tokens):
        if token in eos:
            return tokens[: i + 1][:max_new], True
    return tokens[:max_new], len(tokens) >= max_new


def _check_run(bundle, prompt_ids: list[int], max_new: int) -> None:
    if not prompt_ids:
        raise ValueError("The prompt is empty.")
    if not 1 <= max_new <= MAX_NEW:
        raise ValueError(f"Generate 1 to {MAX_NEW} tokens; got {max_new}.")
    if len(prompt_ids) + max_new + MAX_DRAFT > bundle.spec.max_positions:
        raise ValueError(f"The prompt ({len(prompt_ids)} tokens) plus {max_new} new tokens does not fit "
                         f"the model's {bundle.spec.max_positions} positions.")


def plain_decode(bundle, prompt_ids: list[int], max_new: int, config: SamplingConfig,
                 generator: torch.Generator | None = None, *, cache=None, stop_at_eos: bool = True,
                 should_stop: Callable[[], bool] | None = None) -> Decoded:
    """One forward pass per token (prefill first): the loop speculative decoding is measured against.

    ``step_ms`` holds each decode step's forward pass alone; ``token_ms`` each later token's wall-clock from the
    loop's resumption to the token (its forward pass and the choice of the token), timed like a speculative
    round, whose draft and verify times include their choices too. ``cache`` may be any transformers cache (a
    quantized one, say); a fresh ``DynamicCache`` by default.
    """
    _check_run(bundle, prompt_ids, max_new)
    eos, out = set(bundle.eos_token_ids) if stop_at_eos else set(), Decoded()
    cache = decode.new_cache(bundle) if cache is None else cache
    t0 = time.perf_counter()
    if should_stop is None or not should_stop():
        fwd = decode.forward(bundle, list(prompt_ids), cache)  # the prefill
        out.forward_passes = 1
        resumed = time.perf_counter()
        for step in generation_loop(bundle, cache, list(prompt_ids), fwd.logits[0], max_new, config, generator,
                                    eos=eos, should_stop=should_stop):
            if step.pass_ms is not None:  # from resuming the loop to this token: its decode pass and its choice
                out.token_ms.append((time.perf_counter() - resumed) * 1000.0)
                out.step_ms.append(step.pass_ms)
                out.forward_passes += 1
            out.tokens.append(step.token)
            resumed = time.perf_counter()
        out.done = len(out.tokens) >= max_new or bool(out.tokens and out.tokens[-1] in eos)
    out.ms = (time.perf_counter() - t0) * 1000.0
    return out


# ---------------------------------------------------------------- speculative decoding
@dataclass(frozen=True)
class Round:
    """One draft-and-verify round: the guesses, how many were kept, and the model's own token."""

    drafted: list[int]
    accepted: int  # the kept prefix of ``drafted``
    token: int  # the correction (first guess rejected) or the bonus token (all kept)
    draft_ms: float
    verify_ms: float

    @property
    def bonus(self) -> bool:
        return self.accepted == len(self.drafted)

    @property
    def emitted(self) -> list[int]:
        return self.drafted[: self.accepted] + [self.token]


@dataclass
class Speculated(Decoded):
    """A speculative run: its tokens plus every round (``forward_passes`` counts the model's passes only)."""

    draft: str = ""
    k: int = 0
    rounds: list[Round] = field(default_factory=list)

    @property
    def drafted(self) -> int:
        return sum(len(r.drafted) for r in self.rounds)

    @property
    def accepted(self) -> int:
        return sum(r.accepted for r in self.rounds)

    @property
    def acceptance_rate(self) -> float:
        """Kept ÷ drafted: what servers such as vLLM log as the *draft* acceptance rate. Not the formula's α (the
        chance a tested guess is kept): guesses after a rejection count as drafted but are never tested
        (``speculative_math.alpha_estimate``)."""
        return self.accepted / self.drafted if self.drafted else float("nan")

    @property
    def passes_saved(self) -> int:
        """Model passes plain decoding would have needed for these tokens, minus those used."""
        return len(self.tokens) - self.forward_passes


def verify(bundle, cache, context: list[int], proposal: Proposal, config: SamplingConfig,
           generator: torch.Generator | None) -> tuple[int, int]:
    """The model reads the last token and every guess in one pass; (guesses kept, the model's token).

    ``cache`` holds every context token but the last; afterwards it holds the kept guesses too.
    """
    guesses = proposal.tokens
    logits = decode.forward(bundle, [[context[-1]] + guesses], cache, all_positions=True).logits[0]
    vocab = logits.shape[-1]
    for i, guess in enumerate(guesses):
        probs = decode.process(logits[i], context + guesses[:i], config).probs
        q = proposal.probs[i] if proposal.probs is not None else one_hot(guess, vocab)
        token, kept = speculative_token(probs, q, guess, generator)
        if not kept:
            cache.crop(-(len(guesses) - i))
            return i, token
    bonus = decode.choose(logits[len(guesses)], context + guesses, config, generator)
    return len(guesses), int(bonus.token_id)


def speculate(bundle, prompt_ids: list[int], draft: Draft, k: int, max_new: int, config: SamplingConfig,
              generator: torch.Generator | None = None, *, on_round: Callable[[Speculated], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> Speculated:
    """Generate with ``draft`` proposing up to ``k`` tokens a round (fewer near ``max_new``).

    The prefill gives the first token as in plain decoding; then rounds until EOS or ``max_new``.
    """
    _check_run(bundle, prompt_ids, max_new)
    k = check_draft_length(k)
    eos, out = set(bundle.eos_token_ids), Speculated(draft=draft.name, k=k)
    cache, context = decode.new_cache(bundle), list(prompt_ids)
    t0 = time.perf_counter()
    logits = decode.forward(bundle, [context], cache).logits[0]
    out.forward_passes = 1
    first = int(decode.choose(logits, context, config, generator).token_id)
    out.tokens, out.done = _finish([first], eos, max_new)
    context.append(first)
    while not out.done and not (should_stop is not None and should_stop()):
        t1 = time.perf_counter()
        proposal = draft.propose(context, min(k, max_new - len(out.tokens) - 1), config, generator) \
            if max_new - len(out.tokens) > 1 else Proposal([])
        t2 = time.perf_counter()
        kept, token = verify(bundle, cache, context, proposal, config, generator)
        out.forward_passes += 1
        this = Round(proposal.tokens, kept, token, (t2 - t1) * 1000.0, (time.perf_counter() - t2) * 1000.0)
        out.rounds.append(this)
        context += this.emitted
        draft.keep(len(context) - 1)
        out.tokens, out.done = _finish(out.tokens + this.emitted, eos, max_new)
        if on_round is not None:
            paused = time.perf_counter()
            on_round(out)
            t0 += time.perf_counter() - paused  # the caller's time (a progress bar) is not generation's
    out.ms = (time.perf_counter() - t0) * 1000.0
    return out
