"""Speculative decoding's arithmetic: how many tokens a round gives, and when a longer draft stops paying.

α is the chance that the model keeps a guess it **tests**, given that it kept the guesses before it
(Leviathan et al., 2023). If every tested guess is kept with the same α, independently, a round with a
draft of k guesses emits the kept prefix plus one token of the model's own (the correction, or the bonus
when all k are kept). It emits at least i + 1 tokens when the first i guesses are kept (probability αⁱ), so

    E[tokens per round] = Σ_{i=0..k} αⁱ = (1 − α^(k+1)) / (1 − α)      (k + 1 when α = 1)

(Leviathan et al., 2023, eq. 1). A round costs k draft steps and one verify pass. With c = a draft
step's time ÷ a plain decode step's time, and the verify pass taken as one decode step,

    speed-up = E[tokens per round] / (k·c + 1).

``verify_ratio`` v refines the last assumption: a verify pass reads k + 1 tokens, which on a CPU costs
more than one decode step, so the measured speed-up is closer to E / (k·c + v).

Guesses after the first rejection are never tested, so kept ÷ drafted (what servers such as vLLM log as
the "draft acceptance rate") is (α + α² + … + α^k) / k under that model, well below α. A measured run's
α is kept ÷ tested = kept ÷ (kept + rounds that ended in a rejection), the maximum-likelihood estimate of
α when each tested guess is kept independently (``alpha_estimate``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MAX_K = 16  # the longest draft the chart looks at
RUNS_Z = 3.0  # standard errors apart before the page says kept guesses come in runs (or the opposite)


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


def _check_costs(c: float, verify: float) -> None:
    if c < 0 or verify <= 0 or math.isnan(c) or math.isnan(verify):
        raise ValueError(f"Costs must be ≥ 0 (draft) and > 0 (verify); got c = {c!r}, v = {verify!r}.")


def speedup(alpha: float, k: int, c: float, verify: float = 1.0) -> float:
    """Tokens per round over the round's cost in decode steps: E / (k·c + v)."""
    _check_costs(c, verify)
    return expected_tokens(alpha, k) / (k * c + verify)


def next_guess_pays(alpha: float, k: int, c: float, verify: float = 1.0) -> bool:
    """Whether guess k + 1 raises the speed-up: it adds α^(k+1) tokens for c steps, and that pays exactly when
    α^(k+1) / c exceeds the speed-up already reached at k, E_k / (k·c + v).

    (E_k + α^(k+1)) / (k·c + v + c) > E_k / (k·c + v)  ⇔  α^(k+1)·(k·c + v) > E_k·c, the form used here (no
    division, so c = 0 is allowed: a free guess pays whenever it can be kept)."""
    _check(alpha, k)
    _check_costs(c, verify)
    return alpha ** (k + 1) * (k * c + verify) > expected_tokens(alpha, k) * c


@dataclass(frozen=True)
class BestK:
    """The draft length with the highest speed-up over 1 … ``MAX_K``, for one α and c (and v)."""

    k: int
    speedup: float
    curve: tuple[float, ...]  # speed-up at k = 1 … len(curve)
    alpha: float
    c: float

    @property
    def pays(self) -> bool:
        """Whether any draft length beats plain decoding (speed-up above 1)."""
        return self.speedup > 1.0

    @property
    def next_adds(self) -> float:
        """α^(k+1): the tokens one more guess past the best k would add on average."""
        return self.alpha ** (self.k + 1)


def best_k(alpha: float, c: float, verify: float = 1.0, max_k: int = MAX_K) -> BestK:
    """The k in 1 … ``max_k`` with the highest speed-up, found by the rule of ``next_guess_pays``: lengthen the
    draft while the next guess pays. E_k is concave in k and the cost k·c + v is linear in it, so once the
    speed-up stops rising it never rises again: the first k where the next guess does not pay is the top (the
    smallest such k on a tie)."""
    curve = tuple(speedup(alpha, k, c, verify) for k in range(1, max_k + 1))
    k = 1
    while k < max_k and next_guess_pays(alpha, k, c, verify):
        k += 1
    return BestK(k, curve[k - 1], curve, alpha, c)


def alpha_estimate(kept: int, rejected: int) -> float:
    """α from tested guesses: kept ÷ (kept + rejections). Each round tests its guesses up to the first rejection,
    so the tested guesses are the kept ones plus one per round that ended in a rejection (NaN: none tested)."""
    tested = kept + rejected
    return kept / tested if tested else float("nan")


# ---------------------------------------------------------------- kept guesses in runs?
@dataclass(frozen=True)
class Runs:
    """A round's first guess against the guesses tested after a kept one.

    If every tested guess is kept with one probability α, independently (the formula's assumption), both rates
    estimate the same α. Kept guesses that come in runs (after one kept guess the next is more likely kept) make
    the second rate higher. ``z``: their difference in standard errors of a two-proportion test."""

    first_kept: int
    first_tested: int
    later_kept: int
    later_tested: int

    @property
    def first_rate(self) -> float:
        return self.first_kept / self.first_tested if self.first_tested else float("nan")

    @property
    def later_rate(self) -> float:
        return self.later_kept / self.later_tested if self.later_tested else float("nan")

    @property
    def z(self) -> float:
        """(later − first) ÷ its standard error under one shared α (NaN: a side has no tested guess)."""
        if not self.first_tested or not self.later_tested:
            return float("nan")
        pooled = (self.first_kept + self.later_kept) / (self.first_tested + self.later_tested)
        spread = pooled * (1.0 - pooled) * (1.0 / self.first_tested + 1.0 / self.later_tested)
        gap = self.later_rate - self.first_rate
        return gap / math.sqrt(spread) if spread > 0 else 0.0

    @property
    def reading(self) -> str:
        """"runs", "opposite" (a kept guess makes the next less likely kept), "chance" (within ``RUNS_Z`` standard
        errors), or "unknown" (no guess was tested after a kept one, or no first guess)."""
        z = self.z
        if math.isnan(z):
            return "unknown"
        return "runs" if z > RUNS_Z else ("opposite" if z < -RUNS_Z else "chance")


def runs_of(rounds) -> Runs:
    """``Runs`` counted over ``rounds`` (``speculative.Round``: ``drafted``, ``accepted``)."""
    first_kept = first_tested = later_kept = later_tested = 0
    for r in rounds:
        drafted, kept = len(r.drafted), r.accepted
        if not drafted:
            continue
        tested = kept + (kept < drafted)
        first_tested += 1
        first_kept += kept >= 1
        later_tested += tested - 1
        later_kept += max(0, kept - 1)
    return Runs(first_kept, first_tested, later_kept, later_tested)


# ---------------------------------------------------------------- reading a measured run
@dataclass(frozen=True)
class Measured:
    """What a speculative run and its plain twin measured, in the formula's symbols, over all the run's rounds."""

    draft: str
    k: int
    draft_lengths: tuple[int, ...]  # each round's guesses (k, or fewer: a shorter lookup match, the run's end)
    accepted: int  # guesses kept
    rejected: int  # rounds that ended in a rejection
    tokens_per_round: float  # emitted tokens ÷ rounds, measured
    c: float  # the draft's time per guess ÷ a plain decode step's time
    verify: float  # a verify pass's mean ms ÷ a plain decode step's ms
    speedup: float  # plain ms per token ÷ speculative ms per token, measured (prefill left out on both sides)
    runs: Runs

    @property
    def rounds(self) -> int:
        return len(self.draft_lengths)

    @property
    def full_rounds(self) -> int:
        """Rounds whose draft had all k guesses."""
        return sum(d == self.k for d in self.draft_lengths)

    @property
    def drafted(self) -> int:
        return sum(self.draft_lengths)

    @property
    def tested(self) -> int:
        return self.accepted + self.rejected

    @property
    def alpha(self) -> float:
        """The formula's α: kept ÷ tested guesses."""
        return alpha_estimate(self.accepted, self.rejected)

    @property
    def draft_acceptance_rate(self) -> float:
        """Kept ÷ drafted: what servers log as the draft acceptance rate; not the formula's α."""
        return self.accepted / self.drafted if self.drafted else float("nan")

    def _predicted(self, verify: float) -> float:
        tokens = sum(expected_tokens(self.alpha, d) for d in self.draft_lengths)
        return tokens / sum(d * self.c + verify for d in self.draft_lengths)

    @property
    def predicted_tokens(self) -> float:
        """The formula's tokens per round at the measured α, each round with its own number of guesses."""
        return sum(expected_tokens(self.alpha, d) for d in self.draft_lengths) / self.rounds

    @property
    def predicted_speedup(self) -> float:
        """Σ E(α, d) ÷ Σ (d·c + 1) over the run's rounds, d each round's guesses: the formula, verify as one step."""
        return self._predicted(1.0)

    @property
    def predicted_with_verify(self) -> float:
        """Σ E(α, d) ÷ Σ (d·c + v): the same, the verify pass at its measured cost."""
        return self._predicted(self.verify)


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def read_run(plain, run) -> Measured:
    """``plain``: a ``speculative.Decoded`` (each later token's decode pass and choice timed, ``token_ms``);
    ``run``: a ``speculative.Speculated`` (each round's draft and verify timed, choices included).

    Every round counts, each with its own number of guesses, so the prediction and the measurement cover the same
    rounds; times are per token, prefill (and the first token chosen from it) left out on both sides. Raises
    ValueError when the draft guessed nothing (no α to read) or plain decoding timed no decode step.
    """
    rounds = list(run.rounds)
    drafted = sum(len(r.drafted) for r in rounds)
    if not drafted or not plain.token_ms:
        raise ValueError("The runs are too short to read: no guess drafted, or no timed decode step.")
    step_ms = _mean(plain.token_ms)
    emitted = sum(len(r.emitted) for r in rounds)
    spec_ms = sum(r.draft_ms + r.verify_ms for r in rounds) / emitted
    return Measured(run.draft, run.k, tuple(len(r.drafted) for r in rounds),
                    accepted=sum(r.accepted for r in rounds),
                    rejected=sum(r.accepted < len(r.drafted) for r in rounds),
                    tokens_per_round=emitted / len(rounds),
                    c=sum(r.draft_ms for r in rounds) / drafted / step_ms,
                    verify=_mean(r.verify_ms for r in rounds) / step_ms, speedup=step_ms / spec_ms,
                    runs=runs_of(rounds))
