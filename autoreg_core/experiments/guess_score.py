"""Scoring a learner's guess of the next token against the model's own distribution.

A guess is text ("Paris", " Paris", "the city"); the model predicts token ids. The guess is scored
by its **first token**, in the spelling the model gives more probability to: as typed, or with a
leading space (most words in the middle of a sentence are a token that starts with a space, and a
learner typing "Paris" means " Paris"). The score rewards a likely guess: 100 points minus 10 per
bit of surprisal, never below 0 (p = 1 → 100, p = 1/2 → 90, p = 1/1024 → 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

GUESS_MAX_CHARS = 40
POINTS_PER_BIT = 10.0


class GuessError(ValueError):
    """A guess that cannot be scored; the message is meant for the page."""


@dataclass(frozen=True)
class GuessScore:
    text: str  # as the learner typed it (trimmed)
    token: int  # the first token of the spelling that was scored
    tokens: int  # how many tokens that spelling has (more than 1: scored by the first, and the page says so)
    spaced: bool  # True when the leading-space spelling was the one scored
    prob: float  # the model's probability of ``token`` (raw softmax, before any sampling filter)
    rank: int  # 1 = the model's most likely token
    surprisal_bits: float
    score: float


def points(prob: float) -> float:
    """100 minus 10 per bit of surprisal, floored at 0, to one decimal."""
    if prob <= 0:
        return 0.0
    return round(max(0.0, 100.0 - POINTS_PER_BIT * -math.log2(prob)), 1)


def rank_of(probs: torch.Tensor, token: int) -> int:
    """1 + how many tokens the model finds strictly more likely."""
    return int((probs > probs[token]).sum().item()) + 1


def score_guess(tokenizer, probs: torch.Tensor, text: str) -> GuessScore:
    """The guess scored against ``probs`` (the model's next-token softmax over the whole vocabulary)."""
    text = str(text or "").strip("\r\n")
    if not text.strip():
        raise GuessError("Type a word or a token first.")
    if len(text) > GUESS_MAX_CHARS:
        raise GuessError(f"A guess is one word or token: at most {GUESS_MAX_CHARS} characters.")
    spellings = [(text, False)] + ([(" " + text, True)] if not text[0].isspace() else [])
    best = None
    for spelling, spaced in spellings:
        ids = tokenizer.encode(spelling, add_special_tokens=False)
        if not ids:
            continue
        prob = float(probs[ids[0]])
        if best is None or prob > best[0]:
            best = (prob, ids, spaced)
    if best is None:
        raise GuessError("This guess gives no token at all.")
    prob, ids, spaced = best
    surprisal = -math.log2(prob) if prob > 0 else math.inf
    return GuessScore(text=text, token=int(ids[0]), tokens=len(ids), spaced=spaced, prob=prob,
                      rank=rank_of(probs, ids[0]), surprisal_bits=surprisal, score=points(prob))
