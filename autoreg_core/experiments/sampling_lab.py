"""The sampling lab's arithmetic on one set of logits: the textbook draw, many draws, a temperature sweep,
strategies side by side.

The pipeline itself is ``decode.process``; everything here builds on it and on ``decode``'s one draw,
entropy and coverage functions. Nothing here runs the model: moving a slider redoes only this.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig

MAX_DRAWS = 10_000  # "draw many" cap
SWEEP_TEMPERATURES = tuple(round(0.05 * i, 2) for i in range(1, 61))  # 0.05 … 3.00
COVER_MASS = 0.9  # the sweep counts how many tokens cover this much probability


# ---------------------------------------------------------------- one draw, as a textbook draws it
@dataclass(frozen=True)
class InverseCdfDraw:
    """u ~ Uniform(0, 1); the token is the first, most likely first, whose cumulative probability exceeds u."""

    draw: decode.Draw  # the token and u
    order: torch.Tensor  # ids with probability > 0, most likely first
    cdf: torch.Tensor  # float64 cumulative probabilities along ``order`` (ends at 1)
    position: int  # index into ``order`` of the drawn token

    @property
    def token_id(self) -> int:
        return int(self.draw.token_id)

    @property
    def u(self) -> float:
        return float(self.draw.u)

    @property
    def interval(self) -> tuple[float, float]:
        """[low, high): the slice of [0, 1) that belongs to the drawn token."""
        low = float(self.cdf[self.position - 1]) if self.position > 0 else 0.0
        return low, float(self.cdf[self.position])


def inverse_cdf_draw(probs: torch.Tensor, seed: int) -> InverseCdfDraw:
    """One inverse-CDF draw (``decode.draw``) from a generator seeded with ``seed``."""
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    picked = decode.draw(probs, gen, method=decode.INVERSE_CDF)
    order, cdf = decode.cumulative(probs)
    position = int(torch.nonzero(order == picked.token_id).flatten()[0])
    return InverseCdfDraw(picked, order, cdf, position)


# ---------------------------------------------------------------- many draws
@dataclass(frozen=True)
class ManyDraws:
    n: int
    counts: torch.Tensor  # long [vocab]
    capped: bool = False  # more were asked for than MAX_DRAWS

    @property
    def freqs(self) -> torch.Tensor:
        return self.counts.double() / max(self.n, 1)

    def largest_gap(self, probs: torch.Tensor) -> float:
        """max over tokens of |frequency − probability|."""
        return float((self.freqs - probs.double()).abs().max())


def draw_many(probs: torch.Tensor, n: int, seed: int) -> ManyDraws:
    """``n`` independent draws (with replacement, at most MAX_DRAWS) by ``torch.multinomial``, as generate does."""
    wanted = int(n)
    n = min(max(wanted, 1), MAX_DRAWS)
    probs = probs.detach().float().flatten()
    if not bool((probs > 0).any()):
        raise ValueError("The distribution has no token with probability above 0.")
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    idx = torch.multinomial(probs, num_samples=n, replacement=True, generator=gen)
    return ManyDraws(n=n, counts=torch.bincount(idx, minlength=probs.shape[-1]), capped=wanted > MAX_DRAWS)


# ---------------------------------------------------------------- temperature sweep
@dataclass(frozen=True)
class Sweep:
    temperatures: list[float]
    entropy_bits: list[float]
    top_prob: list[float]
    cover: list[int]  # tokens needed for ``mass``
    mass: float = COVER_MASS

    def at(self, temperature: float) -> int:
        """Index of the sweep point nearest ``temperature``."""
        return min(range(len(self.temperatures)), key=lambda i: abs(self.temperatures[i] - temperature))


def temperature_sweep(logits: torch.Tensor, temperatures=SWEEP_TEMPERATURES, mass: float = COVER_MASS) -> Sweep:
    """softmax(logits / T) for each T (no filters): entropy, top probability, tokens to cover ``mass``."""
    logits = torch.nan_to_num(logits.detach().float().flatten(), nan=decode.NEG_INF)
    ordered = torch.sort(logits, descending=True).values  # ÷ T > 0 keeps the order: each row comes sorted
    temps = [max(float(t), 1e-6) for t in temperatures]
    probs = decode.softmax(ordered.view(1, -1) / torch.tensor(temps).view(-1, 1))  # [T, vocab]
    return Sweep(temperatures=temps, entropy_bits=decode.entropy_bits(probs).tolist(),
                 top_prob=probs.max(dim=-1).values.tolist(),
                 cover=[decode.tokens_to_cover(row, mass) for row in probs], mass=mass)


# ---------------------------------------------------------------- strategies side by side
@dataclass(frozen=True)
class StrategyRow:
    name: str
    pipeline: decode.Pipeline

    @property
    def kept(self) -> int:
        return int(self.pipeline.kept)

    @property
    def entropy_bits(self) -> float:
        return float(decode.entropy_bits(self.pipeline.probs))

    @property
    def top_prob(self) -> float:
        """The most likely token's probability after the filters."""
        return float(self.pipeline.probs.max())


def default_strategies(top_k: int = 40, top_p: float = 0.9, min_p: float = 0.05) -> list[tuple[str, SamplingConfig]]:
    """The side-by-side set: greedy, three temperatures, and the three filters at T = 1."""
    return [
        ("greedy", SamplingConfig(temperature=0.0)),
        ("temperature 0.7", SamplingConfig(temperature=0.7)),
        ("temperature 1.0", SamplingConfig(temperature=1.0)),
        ("temperature 1.5", SamplingConfig(temperature=1.5)),
        (f"top-k {int(top_k)}", SamplingConfig(temperature=1.0, top_k=int(top_k))),
        (f"top-p {top_p:g}", SamplingConfig(temperature=1.0, top_p=float(top_p))),
        (f"min-p {min_p:g}", SamplingConfig(temperature=1.0, min_p=float(min_p))),
    ]


def compare_strategies(logits: torch.Tensor, strategies: list[tuple[str, SamplingConfig]],
                       context=None) -> list[StrategyRow]:
    """The same logits through several configs: what each keeps and how spread out it is."""
    return [StrategyRow(name, decode.process(logits, context, cfg)) for name, cfg in strategies]


# ---------------------------------------------------------------- which tokens a chart shows
def top_token_ids(scores: torch.Tensor, n: int) -> list[int]:
    """The ``n`` ids with the largest scores, most likely first (a chart's fixed x axis)."""
    scores = torch.nan_to_num(scores.detach().float().flatten(), nan=decode.NEG_INF)
    return torch.topk(scores, max(1, min(int(n), scores.shape[-1]))).indices.tolist()


def shown_ids(pipeline: decode.Pipeline, n: int, also: int | None = None) -> list[int]:
    """The pipeline chart's tokens: the top ``n`` once the repetition penalty is applied (the order the
    filters see), plus ``also`` (the drawn token) when it ranks lower."""
    penalised = pipeline.stage(decode.REPETITION) or pipeline.stages[0]
    ids = top_token_ids(penalised.scores, n)
    return ids + [int(also)] if also is not None and int(also) not in ids else ids
