"""The sampling pipeline one stage at a time, as pure functions on one logits vector.

``run_pipeline`` applies transformers' own processors (repetition penalty, temperature, top-k,
top-p, min-p) one after the other, in ``generate``'s order, and keeps every intermediate: the
scores after each stage, the probabilities they give, and which token ids each stage removed.
The last stage's scores are exactly ``sampling.process_logits`` for the same settings, so the
distribution shown is the one ``generate`` (and ``Session.step``) samples from.

Nothing here runs the model: moving a slider re-runs only this arithmetic on cached logits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from transformers import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from .config import SamplingConfig

MAX_DRAWS = 10_000  # "draw many" cap
SWEEP_TEMPERATURES = tuple(round(0.05 * i, 2) for i in range(1, 61))  # 0.05 … 3.00
COVER_MASS = 0.9  # the sweep counts how many tokens cover this much probability

RAW, REPETITION, TEMPERATURE, TOP_K, TOP_P, MIN_P, GREEDY, FALLBACK = (
    "raw logits", "repetition penalty", "temperature", "top-k", "top-p", "min-p", "greedy", "fallback")


@dataclass
class Stage:
    """The state after one stage of the pipeline."""

    name: str  # one of the constants above
    title: str  # e.g. "÷ temperature 0.70"
    active: bool  # False when the setting turns the stage off (it then changes nothing)
    scores: torch.Tensor  # float32 [vocab]; -inf where a token has been removed so far
    probs: torch.Tensor  # float32 [vocab]; softmax(scores): the distribution if we stopped here
    removed: torch.Tensor  # long [n]: ids this stage removed (kept before, gone after)
    kept: int  # tokens still in play after this stage
    threshold: float | None = None  # top-p: kept mass; min-p: probability cut-off
    note: str = ""


@dataclass
class Pipeline:
    """Every stage for one set of logits and one config, plus the final distribution."""

    config: SamplingConfig
    stages: list[Stage]
    probs: torch.Tensor  # the distribution the draw uses (one-hot when greedy or in fallback)
    removed_by: torch.Tensor  # long [vocab]: index into ``stages`` of the stage that removed each id, -1 = kept
    greedy: bool
    fallback: bool = False  # every token was filtered out: we fell back to the top token
    notes: list[str] = field(default_factory=list)

    @property
    def kept_ids(self) -> torch.Tensor:
        return torch.nonzero(self.probs > 0).flatten()

    @property
    def kept(self) -> int:
        return int((self.probs > 0).sum())

    @property
    def final_scores(self) -> torch.Tensor:
        return self.stages[-1].scores

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)

    def removed_stage_name(self, token_id: int) -> str | None:
        idx = int(self.removed_by[token_id])
        return None if idx < 0 else self.stages[idx].name


NEG_INF = float("-inf")


def _softmax(scores: torch.Tensor) -> torch.Tensor:
    """Softmax that gives zeros (not NaN) when every score is -inf."""
    scores = scores.float()
    if float(scores.max()) == NEG_INF:
        return torch.zeros_like(scores)
    return torch.softmax(scores, dim=-1)


def _alive(scores: torch.Tensor) -> torch.Tensor:
    """Tokens still in play: a score above -inf (NaN has been turned into -inf before)."""
    return scores > NEG_INF


def run_pipeline(logits: torch.Tensor, config: SamplingConfig,
                 context_ids: torch.Tensor | list[int] | None = None) -> Pipeline:
    """Raw logits → each stage in generate's order → the distribution the draw uses.

    Bad settings are clamped by ``SamplingConfig.normalized`` first (its notes are kept).
    ``context_ids`` is only needed when the repetition penalty is on.
    """
    logits = logits.detach().float().flatten().cpu()
    vocab = logits.shape[-1]
    config, notes = config.normalized(vocab)
    notes = list(notes)
    ids = torch.as_tensor(context_ids if context_ids is not None else [], dtype=torch.long).view(1, -1)

    has_nan = bool(torch.isnan(logits).any())
    clean = torch.nan_to_num(logits, nan=NEG_INF, posinf=torch.finfo(torch.float32).max) if has_nan else logits
    if has_nan:
        notes.append("Some logits were NaN; they are treated as removed.")
    alive = [_alive(clean)]
    stages: list[Stage] = [Stage(RAW, "raw logits", True, clean, _softmax(clean),
                                 torch.nonzero(~alive[0]).flatten(), int(alive[0].sum()))]
    removed_by = torch.full((vocab,), -1, dtype=torch.long)
    removed_by[~alive[0]] = 0

    def add(name: str, title: str, active: bool, new_scores: torch.Tensor, threshold=None, note="") -> None:
        if new_scores is stages[-1].scores:  # an inactive stage: nothing changes
            stages.append(Stage(name, title, active, new_scores, stages[-1].probs,
                                torch.empty(0, dtype=torch.long), stages[-1].kept, threshold, note))
            alive.append(alive[-1])
            return
        after = _alive(new_scores)
        gone = alive[-1] & ~after
        removed_by[gone] = len(stages)
        alive.append(after)
        stages.append(Stage(name, title, active, new_scores, _softmax(new_scores),
                            torch.nonzero(gone).flatten(), int(after.sum()), threshold, note))

    def apply(proc, scores: torch.Tensor) -> torch.Tensor:
        return proc(ids, scores.unsqueeze(0))[0]

    scores = clean
    if config.repetition_penalty != 1.0:
        if ids.numel() == 0:
            notes.append("The repetition penalty needs the context; without one it changes nothing.")
        scores = apply(RepetitionPenaltyLogitsProcessor(config.repetition_penalty), scores)
        add(REPETITION, f"repetition penalty {config.repetition_penalty:g}", True, scores)

    greedy = config.greedy
    if not greedy:
        scaled = scores / config.temperature if config.temperature != 1.0 else scores
        mx = float(scaled.max())
        if math.isnan(mx) or mx == float("inf"):
            greedy = True  # logits / T overflowed float32: that is argmax
            notes.append(f"Temperature {config.temperature:g} is so small that logits ÷ T overflows; "
                         "that is greedy decoding.")
    if greedy:
        one_hot = torch.full_like(scores, NEG_INF)
        if float(scores.max()) > NEG_INF:  # else nothing is left: the fallback below says so
            one_hot[int(torch.argmax(scores))] = 0.0
        add(GREEDY, "greedy: argmax (temperature 0)", True, one_hot,
            note="Temperature 0 is greedy: the most likely token, always. The filters play no part.")
    else:
        t = config.temperature
        if t != 1.0:
            scores = apply(TemperatureLogitsWarper(float(t)), scores)
        add(TEMPERATURE, f"÷ temperature {t:g}", t != 1.0, scores)
        if config.top_k:
            scores = apply(TopKLogitsWarper(top_k=int(config.top_k)), scores)
        add(TOP_K, f"top-k {config.top_k}" if config.top_k else "top-k off", bool(config.top_k), scores)
        if config.top_p < 1.0:
            entering = _softmax(stages[-1].scores)
            scores = apply(TopPLogitsWarper(top_p=float(config.top_p)), scores)
            mass = float(entering[scores > NEG_INF].sum())
            add(TOP_P, f"top-p {config.top_p:g}", True, scores, threshold=mass,
                note=f"the kept tokens hold {mass:.3f} of the mass (≥ {config.top_p:g})")
        else:
            add(TOP_P, "top-p off", False, scores)
        if config.min_p > 0.0:
            entering = _softmax(stages[-1].scores)
            cut = float(config.min_p * entering.max())
            scores = apply(MinPLogitsWarper(min_p=float(config.min_p)), scores)
            add(MIN_P, f"min-p {config.min_p:g}", True, scores, threshold=cut,
                note=f"tokens below {config.min_p:g} × {float(entering.max()):.3f} = {cut:.4f} are dropped")
        else:
            add(MIN_P, "min-p off", False, scores)

    final = stages[-1].scores
    fallback = False
    if float(final.max()) == NEG_INF:
        fallback = True
        top = int(torch.argmax(clean))
        fixed = torch.full_like(final, float("-inf"))
        fixed[top] = 0.0
        removed_by[top] = -1
        notes.append(f"Every token was filtered out; falling back to the top token (id {top}).")
        stages.append(Stage(FALLBACK, "fallback: top token", True, fixed, _softmax(fixed),
                            torch.empty(0, dtype=torch.long), 1, note="all tokens were removed"))
        final = fixed
    probs = _softmax(final)
    return Pipeline(config=config, stages=stages, probs=probs, removed_by=removed_by, greedy=greedy,
                    fallback=fallback, notes=notes)


# ---------------------------------------------------------------- the draw
@dataclass
class InverseCdfDraw:
    """A textbook draw: u ~ Uniform(0, 1), token = first one whose cumulative probability exceeds u."""

    u: float
    token_id: int
    order: torch.Tensor  # ids sorted by probability, most likely first (kept tokens only)
    cdf: torch.Tensor  # float64 cumulative probabilities along ``order``
    position: int  # index into ``order`` of the chosen token


def inverse_cdf_draw(probs: torch.Tensor, seed: int) -> InverseCdfDraw:
    """Draw one token by inverse CDF from a seeded ``torch.Generator``.

    The tokens are laid out most likely first, so u lands on a big bar most of the time. A
    token with probability 0 has an interval of width 0 and can never be chosen.
    """
    probs = probs.detach().double().flatten()
    kept = torch.nonzero(probs > 0).flatten()
    if kept.numel() == 0:
        raise ValueError("The distribution has no token with probability above 0.")
    order = kept[torch.argsort(probs[kept], descending=True, stable=True)]
    cdf = torch.cumsum(probs[order], dim=0)
    cdf = cdf / cdf[-1]  # float rounding: make the last step exactly 1
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    u = float(torch.rand(1, generator=gen, dtype=torch.float64))
    pos = int(torch.searchsorted(cdf, torch.tensor([u], dtype=torch.float64), right=True)[0])
    pos = min(pos, order.numel() - 1)
    return InverseCdfDraw(u=u, token_id=int(order[pos]), order=order, cdf=cdf, position=pos)


@dataclass
class ManyDraws:
    n: int
    counts: torch.Tensor  # long [vocab]
    capped: bool = False

    @property
    def freqs(self) -> torch.Tensor:
        return self.counts.double() / max(self.n, 1)


def draw_many(probs: torch.Tensor, n: int, seed: int) -> ManyDraws:
    """``n`` independent draws (with replacement) by ``torch.multinomial``, the call generate uses."""
    n_req = int(n)
    capped = n_req > MAX_DRAWS
    n = min(max(n_req, 1), MAX_DRAWS)
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    probs = probs.detach().float().flatten()
    if not bool((probs > 0).any()):
        raise ValueError("The distribution has no token with probability above 0.")
    idx = torch.multinomial(probs, num_samples=n, replacement=True, generator=gen)
    counts = torch.bincount(idx, minlength=probs.shape[-1])
    return ManyDraws(n=n, counts=counts, capped=capped)


# ---------------------------------------------------------------- summaries
def entropy_bits(probs: torch.Tensor) -> float:
    p = probs.double().flatten()
    nz = p[p > 0]
    return max(0.0, float(-(nz * torch.log2(nz)).sum()))


def tokens_to_cover(probs: torch.Tensor, mass: float = COVER_MASS) -> int:
    """How many of the most likely tokens it takes to reach ``mass`` of the probability."""
    sorted_probs = torch.sort(probs.double().flatten(), descending=True).values
    cum = torch.cumsum(sorted_probs, dim=0)
    return int(min(int((cum < mass - 1e-12).sum()) + 1, sorted_probs.numel()))


@dataclass
class StrategyRow:
    name: str
    config: SamplingConfig
    pipeline: Pipeline
    kept: int
    entropy_bits: float
    top_prob: float  # probability of the most likely token after the filters


def compare_strategies(logits: torch.Tensor, strategies: list[tuple[str, SamplingConfig]],
                       context_ids=None) -> list[StrategyRow]:
    """The same logits through several configs: what each keeps and how spread out it is."""
    rows = []
    for name, cfg in strategies:
        pipe = run_pipeline(logits, cfg, context_ids)
        rows.append(StrategyRow(name, pipe.config, pipe, pipe.kept, entropy_bits(pipe.probs),
                                float(pipe.probs.max())))
    return rows


def default_strategies(min_p: float = 0.05, top_k: int = 40, top_p: float = 0.9) -> list[tuple[str, SamplingConfig]]:
    """The side-by-side set: greedy, three temperatures and the three filters at T = 1."""
    return [
        ("greedy", SamplingConfig(temperature=0.0)),
        ("temperature 0.7", SamplingConfig(temperature=0.7)),
        ("temperature 1.0", SamplingConfig(temperature=1.0)),
        ("temperature 1.5", SamplingConfig(temperature=1.5)),
        (f"top-k {int(top_k)}", SamplingConfig(temperature=1.0, top_k=int(top_k))),
        (f"top-p {top_p:g}", SamplingConfig(temperature=1.0, top_p=float(top_p))),
        (f"min-p {min_p:g}", SamplingConfig(temperature=1.0, min_p=float(min_p))),
    ]


@dataclass
class Sweep:
    temperatures: list[float]
    entropy_bits: list[float]
    top_prob: list[float]
    cover: list[int]  # tokens needed for COVER_MASS
    mass: float = COVER_MASS


def temperature_sweep(logits: torch.Tensor, temperatures=SWEEP_TEMPERATURES, mass: float = COVER_MASS) -> Sweep:
    """softmax(logits / T) for each T (no filters): entropy, top probability, tokens for ``mass``."""
    logits = torch.nan_to_num(logits.detach().float().flatten(), nan=NEG_INF)
    sorted_logits = torch.sort(logits, descending=True).values  # dividing by T > 0 keeps the order
    temps = [max(float(t), 1e-6) for t in temperatures]
    ent, top, cover = [], [], []
    for t in temps:
        probs = torch.softmax(sorted_logits / t, dim=-1)
        nz = probs[probs > 0].double()
        ent.append(float(-(nz * torch.log2(nz)).sum()))
        top.append(float(probs[0]))
        cum = torch.cumsum(probs.double(), dim=0)
        cover.append(int(min(int((cum < mass - 1e-12).sum()) + 1, probs.numel())))
    return Sweep(temps, ent, top, cover, mass)


def top_token_ids(logits: torch.Tensor, n: int) -> list[int]:
    """The ``n`` ids with the largest logits, most likely first (the charts' fixed x axis)."""
    logits = torch.nan_to_num(logits.detach().float().flatten(), nan=float("-inf"))
    n = max(1, min(int(n), logits.shape[-1]))
    return torch.topk(logits, n).indices.tolist()


def log_prob_of(logits: torch.Tensor, token_id: int) -> float:
    """Natural log-probability of a token under softmax(logits)."""
    value = float(torch.log_softmax(logits.double().flatten(), dim=-1)[token_id])
    return value if math.isfinite(value) else float("-inf")
