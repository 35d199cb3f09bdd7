"""Constrained decoding: a grammar mask as one more stage of the sampling pipeline (llguidance).

Before the usual stages (repetition penalty, temperature, top-k, top-p, min-p), every token the grammar
cannot accept next gets a logit of −∞, so the model chooses only among text that can still be completed
into a valid answer: a JSON object under a schema, a string a regular expression matches in full, or
one of a list of choices. llguidance's matcher walks the grammar over the tokenizer's own vocabulary
and gives the allowed set at each step; once the grammar is complete only EOS stays allowed.
Each step records how many tokens were allowed and how much of the model's probability the mask
removed (the share the model had put on tokens that would break the grammar).
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import llguidance
import llguidance.hf
import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig

JSON_SCHEMA, REGEX, CHOICE = "JSON schema", "regex", "choice"
KINDS = (JSON_SCHEMA, REGEX, CHOICE)
MAX_NEW = 64


@functools.lru_cache(maxsize=4)
def _ll_tokenizer(tokenizer, vocab: int, eos: int) -> llguidance.LLTokenizer:
    return llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab, eos_token=eos)


def ll_tokenizer(bundle) -> llguidance.LLTokenizer:
    """llguidance's view of the model's tokenizer (about half a second to build, so kept)."""
    return _ll_tokenizer(bundle.tokenizer, bundle.spec.vocab, int(bundle.eos_token_ids[0]))


def grammar(kind: str, source) -> str:
    """llguidance's grammar for a JSON schema (dict or JSON text), a regex, or a list of choices."""
    if kind == JSON_SCHEMA:
        return llguidance.grammar_from("json_schema", source if isinstance(source, str) else json.dumps(source))
    if kind == REGEX:
        return llguidance.grammar_from("regex", str(source))
    if kind == CHOICE:
        choices = [str(c) for c in source]
        if not choices or any(not c for c in choices):
            raise ValueError("Give at least one choice, none of them empty.")
        return llguidance.grammar_from("choice", choices)
    raise ValueError(f"Unknown grammar kind {kind!r}; use one of {', '.join(KINDS)}.")


def matcher(bundle, kind: str, source) -> llguidance.LLMatcher:
    """A fresh matcher at the start of the grammar; a grammar llguidance refuses raises ValueError."""
    try:
        text = grammar(kind, source)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"llguidance could not read this {kind}: {exc}") from exc
    found = llguidance.LLMatcher(ll_tokenizer(bundle), text, log_level=0)
    if found.is_error():
        raise ValueError(f"llguidance could not read this {kind}: {found.get_error()}")
    return found


def allowed(found: llguidance.LLMatcher, vocab: int) -> torch.Tensor:
    """bool [vocab]: the tokens the grammar accepts next (llguidance's logit bias: 0 = not allowed)."""
    bias = torch.frombuffer(bytearray(found.compute_logit_bias()), dtype=torch.uint8)
    out = torch.zeros(vocab, dtype=torch.bool)
    n = min(vocab, bias.numel())
    out[:n] = bias[:n] > 0
    return out


def mask_logits(logits: torch.Tensor, ok: torch.Tensor) -> torch.Tensor:
    """The grammar stage: −∞ for every token the grammar does not allow, the logit unchanged otherwise."""
    return logits.masked_fill(~ok, decode.NEG_INF)


@dataclass(frozen=True)
class MaskStep:
    token_id: int
    allowed: int  # tokens the grammar allowed at this step
    removed_mass: float  # the model's probability on tokens the mask removed (raw softmax)
    model_top: int  # the model's own favourite before the mask
    top_allowed: bool  # whether that favourite was allowed


@dataclass
class Constrained:
    """A constrained (or, with ``kind`` None, unconstrained) generation: the tokens and every mask step."""

    kind: str | None
    prompt_ids: list[int]
    tokens: list[int] = field(default_factory=list)
    steps: list[MaskStep] = field(default_factory=list)
    complete: bool = False  # the grammar was complete when generation ended (always True unconstrained)
    ended_by_eos: bool = False

    @property
    def text_ids(self) -> list[int]:
        """The tokens without a final EOS."""
        return self.tokens[:-1] if self.ended_by_eos else list(self.tokens)


def _stage(logits: torch.Tensor, found: llguidance.LLMatcher | None) -> tuple[torch.Tensor, int, float, bool]:
    if found is None:
        return logits, logits.shape[-1], 0.0, True
    ok = allowed(found, logits.shape[-1])
    probs = decode.softmax(logits)
    top = int(torch.argmax(logits))
    return mask_logits(logits, ok), int(ok.sum()), float(probs[~ok].sum()), bool(ok[top])


def generate(bundle, prompt_ids: list[int], kind: str | None, source, max_new: int = MAX_NEW,
             config: SamplingConfig | None = None, generator: torch.Generator | None = None,
             should_stop: Callable[[], bool] | None = None) -> Constrained:
    """Generate after ``prompt_ids`` with the grammar stage first (``kind`` None: no grammar), until EOS,
    ``max_new`` tokens, or a grammar that accepts nothing more."""
    if not 1 <= max_new <= MAX_NEW:
        raise ValueError(f"Generate 1 to {MAX_NEW} tokens; got {max_new}.")
    config = config or SamplingConfig(temperature=0.0)
    found = matcher(bundle, kind, source) if kind is not None else None
    eos, out = set(bundle.eos_token_ids), Constrained(kind, list(prompt_ids))
    cache = decode.new_cache(bundle)
    logits = decode.forward(bundle, list(prompt_ids), cache).logits[0]
    for _ in range(max_new):
        if should_stop is not None and should_stop():
            break
        masked, n_ok, removed, top_ok = _stage(logits, found)
        token = int(decode.choose(masked, out.prompt_ids + out.tokens, config, generator).token_id)
        out.steps.append(MaskStep(token, n_ok, removed, int(torch.argmax(logits)), top_ok))
        out.tokens.append(token)
        if found is not None and not found.consume_token(token):
            raise ValueError(f"llguidance refused token {token} that its own mask allowed: {found.get_error()}")
        if token in eos:
            out.ended_by_eos = True
            break
        logits = decode.forward(bundle, [token], cache).logits[0]
    out.complete = found is None or found.is_accepting() or found.is_stopped()
    return out
