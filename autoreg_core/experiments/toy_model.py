"""A toy language model with four tokens, run by the same loop and the same sampling code as the real one.

Its "model" is a table of scores: the logits of the next token given the previous one (a bigram model).
Everything after the scores is the engine's own code: ``decode.choose`` runs the same processors
(temperature, top-k, top-p) and the same draw as a real step, so the trace shows the loop itself,
small enough to follow by hand.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig

VOCAB = ("the", "cat", "sat", "<eos>")
EOS = VOCAB.index("<eos>")
# Row: the previous token; column: the next token's score (logit). Hand-set so greedy reads a sentence.
SCORES = torch.tensor([
    # the   cat   sat   <eos>
    [-2.0, 3.0, 1.0, -1.0],   # after "the"
    [0.5, -2.0, 2.5, 0.0],    # after "cat"
    [1.0, 0.0, -2.0, 1.5],    # after "sat"
    [0.0, 0.0, 0.0, 0.0],     # after "<eos>" (never used: the loop stops)
])
MAX_STEPS = 8


@dataclass(frozen=True)
class ToyStep:
    """One pass of the loop: what was read, the scores, the distribution drawn from, and the pick."""
    step: int
    context: tuple[int, ...]
    logits: tuple[float, ...]
    probs: tuple[float, ...]  # after the sampling processors (one-hot when greedy)
    pick: int


def toy_logits(context: list[int]) -> torch.Tensor:
    """The toy model's forward pass: the score row of the last token (it reads only that one)."""
    return SCORES[context[-1]].clone()


GREEDY = SamplingConfig(temperature=0)  # frozen: safe to share as a default


def toy_trace(start: str = "the", config: SamplingConfig = GREEDY,
              max_steps: int = MAX_STEPS) -> list[ToyStep]:
    """Generate from ``start`` until <eos> or ``max_steps``: score, process, pick, append, repeat."""
    if start not in VOCAB or start == "<eos>":
        raise ValueError(f"Start from one of {', '.join(VOCAB[:-1])}.")
    if not 1 <= max_steps <= 50:
        raise ValueError("The toy loop runs 1 to 50 steps.")
    generator = torch.Generator().manual_seed(config.seed)
    context, steps = [VOCAB.index(start)], []
    for step in range(1, max_steps + 1):
        logits = toy_logits(context)
        choice = decode.choose(logits, context, config, generator)
        steps.append(ToyStep(step, tuple(context), tuple(logits.tolist()), tuple(choice.pipeline.probs.tolist()),
                             int(choice.token_id)))
        context.append(int(choice.token_id))
        if choice.token_id == EOS:
            break
    return steps
