"""Speculative decoding's arithmetic: how many tokens a round gives, and when a longer draft stops paying.

If the model keeps each guess with the same probability α, independently, a round with a draft of k
guesses emits the kept prefix plus one token of the model's own (the correction, or the bonus when all
k are kept). It emits at least i + 1 tokens when the first i guesses are kept (probability αⁱ), so

    E[tokens per round] = Σ_{i=0..k} αⁱ = (1 − α^(k+1)) / (1 − α)      (k + 1 when α = 1)

(Leviathan et al., 2023, eq. 1). A round costs k draft steps and one verify pass. With c = a draft
step's time ÷ a plain decode step's time, and the verify pass taken as one decode step,

    speed-up = E[tokens per round] / (k·c + 1).

``verify_ratio`` v refines the last assumption: a verify pass reads k + 1 tokens, which on a CPU costs
more than one decode step, so the measured speed-up is closer to E / (k·c + v).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MAX_K = 16  # the longest draft the chart looks at


def _check(alpha: float, k: int) -> None:
    if not 0.0 <= alpha <= 1.0 or math.isnan(alpha):
        raise ValueError(f"The acceptance rate α must be between 0 and 1; got {alpha!r}.")
    if int(k) != k or k < 0:
        raise ValueError(f"The draft length k must be a whole number ≥ 0; got {k!r}.")


def expected_tokens(alpha: float, k: int) -> float:
    """(1 − α^(k+1)) / (1 − α): the mean tokens one round emits; k + 1 when every guess is kept (α = 1)."""
    _check(alpha, k)
    if alpha == 1.0:
        return float(k + 1)
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def speedup(alpha: float, k: int, c: float, verify: float = 1.0) -> float:
    """Tokens per round over the round's cost in decode steps: E / (k·c + v)."""
    if c < 0 or verify <= 0 or math.isnan(c) or math.isnan(verify):
        raise ValueError(f"Costs must be ≥ 0 (draft) and > 0 (verify); got c = {c!r}, v = {verify!r}.")
    return expected_tokens(alpha, k) / (k * c + verify)


@dataclass(frozen=True)
class BestK:
    """The draft length with the highest speed-up over 1 … ``MAX_K``, for one α and c."""

    k: int
    speedup: float
    curve: tuple[float, ...]  # speed-up at k = 1 … len(curve)

    @property
    def pays(self) -> bool:
        """Whether any draft length beats plain decoding (speed-up above 1)."""
        return self.speedup > 1.0


def best_k(alpha: float, c: float, verify: float = 1.0, max_k: int = MAX_K) -> BestK:
    """The k in 1 … ``max_k`` that maximises the speed-up (the smallest such k on a tie)."""
    curve = tuple(speedup(alpha, k, c, verify) for k in range(1, max_k + 1))
    top = max(range(len(curve)), key=lambda i: (curve[i], -i))
    return BestK(top + 1, curve[top], curve)


# ---------------------------------------------------------------- reading a measured run
@dataclass(frozen=True)
class Measured:
    """What a speculative run and its plain twin measured, in the formula's symbols."""

    draft: str
    k: int
    rounds: int
    drafted: int
    accepted: int
    tokens_per_round: float  # emitted tokens ÷ rounds, measured
    alpha: float  # accepted ÷ drafted
    c: float  # a draft step's ms ÷ a plain decode step's ms
    verify: float  # a verify pass's ms ÷ a plain decode step's ms
    speedup: float  # plain ms per token ÷ speculative ms per token, measured (prefill excluded)

    @property
    def predicted_tokens(self) -> float:
        return expected_tokens(self.alpha, self.k)

    @property
    def predicted_speedup(self) -> float:
        return speedup(self.alpha, self.k, self.c)

    @property
    def predicted_with_verify(self) -> float:
        return speedup(self.alpha, self.k, self.c, self.verify)


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def read_run(plain, run) -> Measured:
    """``plain``: a ``speculative.Decoded`` (its decode steps timed); ``run``: a ``speculative.Speculated``.

    Only full rounds (k guesses) count for α and the tokens per round, so the shortened last rounds
    near ``max_new`` do not pull the mean down; times are per token, prefill left out on both sides.
    """
    full = [r for r in run.rounds if len(r.drafted) == run.k] or list(run.rounds)
    if not full or not plain.step_ms:
        raise ValueError("The runs are too short to read: no full round, or no timed decode step.")
    drafted, accepted = sum(len(r.drafted) for r in full), sum(r.accepted for r in full)
    step_ms = _mean(plain.step_ms)
    draft_ms = sum(r.draft_ms for r in full) / max(1, drafted)
    spec_ms = sum(r.draft_ms + r.verify_ms for r in run.rounds) / max(1, sum(len(r.emitted) for r in run.rounds))
    return Measured(run.draft, run.k, len(full), drafted, accepted,
                    tokens_per_round=_mean(len(r.emitted) for r in full),
                    alpha=accepted / drafted if drafted else 0.0, c=draft_ms / step_ms,
                    verify=_mean(r.verify_ms for r in full) / step_ms, speedup=step_ms / spec_ms)
