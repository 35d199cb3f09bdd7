"""From logits to the next token, with transformers' own processors and warpers.

The list is built in the order ``model.generate`` uses (repetition penalty first, then temperature,
top-k, top-p, min-p), so the filtered distribution here is the one ``generate`` samples from.
"""
from __future__ import annotations

import torch
from transformers import (
    LogitsProcessorList,
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from .config import SamplingConfig


def build_processors(config: SamplingConfig) -> LogitsProcessorList:
    """The processors ``generate`` would apply for this config, in generate's order."""
    procs = LogitsProcessorList()
    if config.repetition_penalty != 1.0:
        procs.append(RepetitionPenaltyLogitsProcessor(config.repetition_penalty))
    if config.greedy:
        return procs  # warpers only run when sampling, exactly as in generate
    if config.temperature != 1.0:
        procs.append(TemperatureLogitsWarper(config.temperature))
    if config.top_k:
        procs.append(TopKLogitsWarper(top_k=config.top_k))
    if config.top_p < 1.0:
        procs.append(TopPLogitsWarper(top_p=config.top_p))
    if config.min_p > 0.0:
        procs.append(MinPLogitsWarper(min_p=config.min_p))
    return procs


def process_logits(logits: torch.Tensor, context_ids: torch.Tensor, config: SamplingConfig) -> torch.Tensor:
    """Raw next-token logits [vocab] → processed scores [vocab] (-inf where a filter removed a token).

    ``context_ids`` is every token so far (prompt + generated), needed by the repetition penalty.
    """
    scores = logits.detach().float().unsqueeze(0)
    ids = context_ids.to(scores.device).view(1, -1)
    return build_processors(config)(ids, scores)[0]


def probs_from_scores(scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the full vocabulary in float32."""
    return torch.softmax(scores.float(), dim=-1)


def filtered_probs(scores: torch.Tensor, config: SamplingConfig) -> torch.Tensor:
    """The distribution the draw uses: softmax of the processed scores, or one-hot for greedy."""
    if config.greedy:
        out = torch.zeros_like(scores, dtype=torch.float32)
        out[int(torch.argmax(scores))] = 1.0
        return out
    return probs_from_scores(scores)


def draw(scores: torch.Tensor, config: SamplingConfig, generator: torch.Generator | None) -> int:
    """Pick the next token: argmax when greedy, else ``torch.multinomial`` on the softmax.

    That is the very call ``generate`` makes, so a generator seeded like ``torch.manual_seed``
    replays ``generate``'s sampled tokens.
    """
    if config.greedy:
        return int(torch.argmax(scores))
    probs = probs_from_scores(scores).unsqueeze(0)
    return int(torch.multinomial(probs, num_samples=1, generator=generator)[0, 0])


def entropy_bits(probs: torch.Tensor) -> float:
    """Shannon entropy in bits of a probability vector (0·log 0 counted as 0)."""
    p = probs.double()
    nz = p[p > 0]
    return float(-(nz * torch.log2(nz)).sum())


def rank_of(probs: torch.Tensor, token_id: int) -> int:
    """1-based rank of a token in a distribution (1 = most likely)."""
    return int((probs > probs[token_id]).sum()) + 1

