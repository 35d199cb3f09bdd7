"""One decode step, written once: ``forward`` is the only model call, ``choose`` picks the token.

The loop the app teaches::

    fwd    = forward(bundle, prompt_ids, cache)          # prefill: every prompt token, fills the cache
    repeat:
        choice = choose(fwd.logits[0], context, config, generator)   # processors, then the draw
        fwd    = forward(bundle, [choice.token_id], cache)            # one token in, cache + 1 row

``choose`` keeps every intermediate of the sampling pipeline (raw logits, the scores after each of
transformers' processors in ``generate``'s order, the probabilities each gives, what each removed),
so a page can redraw any stage from one object, and moving a slider redoes only this arithmetic.
The draw is ``torch.multinomial(softmax(scores), 1)`` on the caller's generator, the very call
``generate`` makes, so a generator seeded like ``torch.manual_seed`` replays ``generate`` exactly.

Everything works on one row ``[vocab]`` or a batch ``[batch, vocab]`` (continuations, beams).
"""
from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass, field

import torch
from transformers import (
    DynamicCache,
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.timing import timed_ms

NEG_INF = float("-inf")

# Stage names, in generate's order.
RAW, REPETITION, TEMPERATURE, TOP_K, TOP_P, MIN_P, ARGMAX, FALLBACK = (
    "raw logits", "repetition penalty", "temperature", "top-k", "top-p", "min-p", "greedy", "fallback")

MULTINOMIAL, INVERSE_CDF = "multinomial", "inverse CDF"


# ---------------------------------------------------------------- the model call
@dataclass
class Forward:
    """What one pass through the model returns to the engine."""

    logits: torch.Tensor  # float32 on CPU: [batch, vocab] at the last position, [batch, seq, vocab] if all_positions
    cache: DynamicCache | None  # the same cache object, now longer by the tokens fed (None without a cache)
    hidden_states: tuple[torch.Tensor, ...] | None  # entry l = input of layer l (last = after the final norm)
    ms: float  # wall-clock time of the pass (CUDA synchronised)


def new_cache(bundle) -> DynamicCache:
    """An empty KV cache for this model."""
    return DynamicCache(config=bundle.config)


def copy_cache(cache: DynamicCache, bundle) -> DynamicCache:
    """A deep copy of a cache's K and V tensors, so a side computation never touches a session's cache.

    A sliding layer holds only its window's keys but counts every position it has seen; the copy counts
    the same, or the next token would be given the wrong position."""
    data = [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]
    copy = DynamicCache(data, config=bundle.config)
    for mine, theirs in zip(copy.layers, cache.layers, strict=True):
        if hasattr(theirs, "cumulative_length"):
            mine.cumulative_length = theirs.cumulative_length
    return copy


def can_crop(cache: DynamicCache, n: int, adding: int = 0) -> bool:
    """Whether ``cache.crop(-n)`` can drop the last ``n`` positions (once ``adding`` more are fed): a
    sliding-window layer that has reached its window has already thrown away the older keys it would
    need to go back."""
    for layer in cache.layers:
        window = getattr(layer, "sliding_window", None)
        if window is not None and n > 0 and int(layer.get_seq_length()) + adding >= int(window):
            return False
    return True


def step_and_back_ms(bundle, tokens, cache: DynamicCache) -> float:
    """The ms of one decode step on ``cache``, which is left as it was: cropped back, or, where a sliding
    window could not go back, the step runs on a copy (the copy is made before the timed pass)."""
    if can_crop(cache, 1, adding=1):
        ms = forward(bundle, tokens, cache).ms
        cache.crop(-1)
        return ms
    return forward(bundle, tokens, copy_cache(cache, bundle)).ms


def crop_to(bundle, cache: DynamicCache, ids) -> torch.Tensor | None:
    """Shorten ``cache`` in place so that it holds exactly ``ids`` (a prefix of what it holds).

    Cropped when every layer can go back (``can_crop``); otherwise rebuilt with one prefill pass over
    ``ids``, the same keys and values up to rounding, since a sliding layer past its window no longer holds
    the positions it would need. Returns the logits after ``ids`` when a pass ran (None when only cropped).
    """
    extra = int(cache.get_seq_length()) - len(ids)
    if extra <= 0:
        return None
    if can_crop(cache, extra):
        cache.crop(-extra)
        return None
    fresh = new_cache(bundle)
    fwd = forward(bundle, list(ids), fresh)
    cache.layers[:] = fresh.layers
    return fwd.logits[0]


@functools.lru_cache(maxsize=8)
def _takes_logits_to_keep(model_type: type) -> bool:
    return "logits_to_keep" in inspect.signature(model_type.forward).parameters


def forward(bundle, input_ids, cache: DynamicCache | None = None, *, hidden_states: bool = False,
            all_positions: bool = False, attention_mask=None, position_ids=None) -> Forward:
    """Run tokens through the model, on ``cache`` when given (it grows in place), else without one.

    Only the last position's logits are computed unless ``all_positions`` (``logits_to_keep=1``,
    as ``generate`` does), so a long prefill does not build a [seq, vocab] matrix it throws away.
    Rows of different lengths in one batch (serving) are left-padded: ``attention_mask`` [batch,
    cached + new] marks real positions with 1, ``position_ids`` [batch, new] counts real tokens only.
    The pass runs inside the bundle's ``forward_gate`` (a server's limit on passes at once; nothing in a
    notebook), and ``Forward.ms`` starts once the gate has let it in.
    """
    model, device = bundle.model, bundle.device
    ids = torch.as_tensor(input_ids, dtype=torch.long)
    if ids.dim() == 1:
        ids = ids.view(1, -1)
    kwargs: dict = {"input_ids": ids.to(device), "use_cache": cache is not None}
    if cache is not None:
        kwargs["past_key_values"] = cache
    if hidden_states:
        kwargs["output_hidden_states"] = True
    if attention_mask is not None:
        kwargs["attention_mask"] = torch.as_tensor(attention_mask, dtype=torch.long).to(device)
    if position_ids is not None:
        kwargs["position_ids"] = torch.as_tensor(position_ids, dtype=torch.long).to(device)
    if not all_positions and _takes_logits_to_keep(type(model)):
        kwargs["logits_to_keep"] = 1
    def run() -> tuple:
        with torch.inference_mode():
            out = model(**kwargs)
            return out, (out.logits if all_positions else out.logits[:, -1]).float().cpu()

    with bundle.forward_gate():
        (out, logits), ms = timed_ms(run, device)
    return Forward(logits=logits, cache=out.past_key_values if cache is not None else None,
                   hidden_states=out.hidden_states if hidden_states else None, ms=ms)


# ---------------------------------------------------------------- small measures of a distribution
def softmax(scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis in float32; a row whose scores are all -inf gives zeros, not NaN."""
    scores = scores.float()
    dead = ~(scores > NEG_INF).any(dim=-1, keepdim=True)
    probs = torch.softmax(scores.masked_fill(dead, 0.0), dim=-1)
    return probs.masked_fill(dead, 0.0)


def entropy_bits(probs: torch.Tensor) -> float | torch.Tensor:
    """Shannon entropy in bits over the last axis (0·log 0 counts as 0): a float for one row."""
    out = (torch.special.entr(probs.double()).sum(dim=-1) / math.log(2)).clamp_min(0.0)  # entr: −p ln p, 0 at 0
    return float(out) if out.dim() == 0 else out


def tokens_to_cover(probs: torch.Tensor, mass: float = 0.9) -> int:
    """How many of the most likely tokens it takes to reach ``mass`` of the probability (one row)."""
    ordered = torch.sort(probs.double().flatten(), descending=True).values
    cum = torch.cumsum(ordered, dim=0)
    return int(min(int((cum < mass - 1e-12).sum()) + 1, ordered.numel()))


def rank_of(probs: torch.Tensor, token_id: int) -> int:
    """1-based rank of a token in one row (1 = most likely; ties share the better rank)."""
    return int((probs > probs[token_id]).sum()) + 1


def logprob_of(logits: torch.Tensor, token_id: int) -> float:
    """Natural log-probability of a token under softmax(logits) (one row)."""
    return float(torch.log_softmax(logits.double(), dim=-1)[token_id])


# ---------------------------------------------------------------- the sampling pipeline
@dataclass
class Stage:
    """The scores after one stage of the pipeline, and what they mean."""

    name: str  # one of the stage names above
    title: str  # e.g. "÷ temperature 0.70"
    active: bool  # False when the setting turns the stage off (it then changes nothing)
    scores: torch.Tensor  # float32, like the logits; -inf where a token has been removed so far
    probs: torch.Tensor  # softmax(scores): the distribution if we stopped here
    removed: torch.Tensor  # bool, like the logits: removed by this very stage
    threshold: float | None = None  # top-p: the kept mass; min-p: the probability cut-off (one row)

    @property
    def kept(self) -> int | torch.Tensor:
        """Tokens still in play after this stage (a tensor of counts for a batch)."""
        n = (self.scores > NEG_INF).sum(dim=-1)
        return int(n) if n.dim() == 0 else n

    @property
    def removed_ids(self) -> torch.Tensor:
        """Ids this stage removed (one row)."""
        return torch.nonzero(self.removed.flatten()).flatten()


@dataclass
class Pipeline:
    """Every stage for one set of logits and one config: raw first, the distribution drawn from last."""

    config: SamplingConfig  # after clamping (see ``notes``)
    stages: list[Stage]
    greedy: bool  # temperature 0, or a temperature so small that logits ÷ T overflows
    fallback: bool = False  # every token was filtered out: the top token is kept instead
    notes: list[str] = field(default_factory=list)

    @property
    def raw_probs(self) -> torch.Tensor:
        """The model's own softmax, before any processor."""
        return self.stages[0].probs

    @property
    def final_scores(self) -> torch.Tensor:
        return self.stages[-1].scores

    @property
    def probs(self) -> torch.Tensor:
        """The distribution the draw uses (one-hot when greedy)."""
        return self.stages[-1].probs

    @property
    def kept(self) -> int | torch.Tensor:
        return self.stages[-1].kept

    @property
    def kept_ids(self) -> torch.Tensor:
        return torch.nonzero(self.probs.flatten() > 0).flatten()

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)

    def removed_by(self) -> torch.Tensor:
        """For each id of one row: the index into ``stages`` of the stage that removed it, -1 if kept."""
        out = torch.full(self.stages[0].scores.flatten().shape, -1, dtype=torch.long)
        for i, stage in enumerate(self.stages):
            out[stage.removed.flatten()] = i
        return out


class _Builder:
    """Appends stages, working out what each one removed."""

    def __init__(self, raw: torch.Tensor):
        self.stages = [Stage(RAW, "raw logits", True, raw, softmax(raw), ~(raw > NEG_INF))]

    def add(self, name: str, title: str, active: bool, scores: torch.Tensor, threshold=None) -> torch.Tensor:
        before = self.stages[-1]
        if scores is before.scores:  # an inactive stage changes nothing
            self.stages.append(Stage(name, title, active, scores, before.probs,
                                     torch.zeros_like(before.removed), threshold))
        else:
            gone = (before.scores > NEG_INF) & ~(scores > NEG_INF)
            self.stages.append(Stage(name, title, active, scores, softmax(scores), gone, threshold))
        return scores


def _apply(processor, context: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """A transformers processor on one row or a batch (it expects [batch, vocab])."""
    if scores.dim() == 1:
        return processor(context.view(1, -1), scores.unsqueeze(0))[0]
    return processor(context, scores)


def _as_context(context, logits: torch.Tensor) -> torch.Tensor:
    ids = torch.as_tensor(context if context is not None else [], dtype=torch.long)
    if logits.dim() == 2 and ids.dim() == 1:
        ids = ids.view(1, -1).expand(logits.shape[0], -1)
    return ids


def _one_hot_argmax(scores: torch.Tensor, always: bool = False) -> torch.Tensor:
    """0 at each row's argmax, -inf elsewhere; a row with nothing left stays all -inf unless ``always``."""
    out = torch.full_like(scores, NEG_INF)
    live = (scores > NEG_INF).any(dim=-1, keepdim=True) | always
    top = torch.argmax(scores, dim=-1, keepdim=True)
    return out.scatter(-1, top, torch.where(live, 0.0, NEG_INF))


def _overflows(scores: torch.Tensor, temperature: float) -> bool:
    top = float((scores / temperature).max())
    return math.isnan(top) or top == math.inf


def process(logits: torch.Tensor, context, config: SamplingConfig) -> Pipeline:
    """Raw logits → each processor in generate's order → the distribution the draw uses.

    The order is generate's: repetition penalty, then (sampling only) temperature, top-k, top-p,
    min-p; each is transformers' own class. Bad settings are clamped first and the clamping is said
    in ``notes``. ``context`` (the ids so far) only matters for the repetition penalty.
    """
    raw = logits.detach().float().cpu()
    config, notes = config.normalized(raw.shape[-1])
    notes = list(notes)
    if bool(torch.isnan(raw).any()):
        raw = torch.nan_to_num(raw, nan=NEG_INF, posinf=torch.finfo(torch.float32).max)
        notes.append("Some logits were NaN; they are treated as removed.")
    ids = _as_context(context, raw)
    build = _Builder(raw)
    scores = raw
    if config.repetition_penalty != 1.0:
        if ids.numel() == 0:
            notes.append("The repetition penalty needs the context; without one it changes nothing.")
        scores = build.add(REPETITION, f"repetition penalty {config.repetition_penalty:g}", True,
                           _apply(RepetitionPenaltyLogitsProcessor(config.repetition_penalty), ids, scores))
    greedy = config.greedy
    if not greedy and _overflows(scores, config.temperature):
        greedy = True  # logits ÷ T overflowed float32: that is argmax
        notes.append(f"Temperature {config.temperature:g} is so small that logits ÷ T overflows; "
                     "that is greedy decoding.")
    if greedy:
        build.add(ARGMAX, "greedy: argmax (temperature 0)", True, _one_hot_argmax(scores))
    else:
        scores = _sampling_stages(build, ids, scores, config)
    fallback = not bool((build.stages[-1].scores > NEG_INF).any(dim=-1).all())
    if fallback:
        dead = ~(build.stages[-1].scores > NEG_INF).any(dim=-1, keepdim=True)
        fixed = torch.where(dead, _one_hot_argmax(raw, always=True), build.stages[-1].scores)
        notes.append("Every token was filtered out; falling back to the most likely token.")
        build.add(FALLBACK, "fallback: top token", True, fixed)
        build.stages[-1].removed = torch.zeros_like(build.stages[-1].removed)
        for stage in build.stages[:-1]:  # the rescued token is kept after all
            stage.removed = stage.removed & ~(fixed > NEG_INF)
    return Pipeline(config=config, stages=build.stages, greedy=greedy, fallback=fallback, notes=notes)


def _sampling_stages(build: _Builder, ids: torch.Tensor, scores: torch.Tensor,
                     config: SamplingConfig) -> torch.Tensor:
    """Temperature, top-k, top-p, min-p: every stage is added, switched-off ones as inactive."""
    t = config.temperature
    if t != 1.0:
        scores = _apply(TemperatureLogitsWarper(float(t)), ids, scores)
    build.add(TEMPERATURE, f"÷ temperature {t:g}", t != 1.0, scores)
    if config.top_k:
        scores = _apply(TopKLogitsWarper(top_k=int(config.top_k)), ids, scores)
    build.add(TOP_K, f"top-k {config.top_k}" if config.top_k else "top-k off", bool(config.top_k), scores)
    if config.top_p < 1.0:
        entering = build.stages[-1].probs
        scores = _apply(TopPLogitsWarper(top_p=float(config.top_p)), ids, scores)
        mass = float(entering.flatten()[(scores > NEG_INF).flatten()].sum()) if scores.dim() == 1 else None
        build.add(TOP_P, f"top-p {config.top_p:g}", True, scores, threshold=mass)
    else:
        build.add(TOP_P, "top-p off", False, scores)
    if config.min_p > 0.0:
        entering = build.stages[-1].probs
        cut = float(config.min_p * entering.max()) if scores.dim() == 1 else None
        scores = _apply(MinPLogitsWarper(min_p=float(config.min_p)), ids, scores)
        build.add(MIN_P, f"min-p {config.min_p:g}", True, scores, threshold=cut)
    else:
        build.add(MIN_P, "min-p off", False, scores)
    return scores


# ---------------------------------------------------------------- the draw
@dataclass
class Draw:
    """One draw from a distribution, with what it took to make it."""

    token_id: int | torch.Tensor  # a tensor of ids for a batch
    method: str  # "multinomial" (generate's call), "inverse CDF" (the textbook picture), or "greedy"
    u: float | None = None  # the uniform number, for an inverse-CDF draw
    generator_state: torch.Tensor | None = None  # the generator just before the draw (undo restores it)


def draw(probs: torch.Tensor, generator: torch.Generator | None, method: str = MULTINOMIAL) -> Draw:
    """Pick a token from ``probs`` with the caller's generator.

    ``multinomial`` is ``torch.multinomial(probs, 1)``, exactly what ``generate`` does. ``inverse CDF``
    lays the tokens out most likely first, draws u ~ Uniform(0, 1) and takes the first token whose
    cumulative probability exceeds u (one row): the picture a textbook draws.
    """
    state = generator.get_state() if generator is not None else None
    if method == INVERSE_CDF:
        order, cdf = cumulative(probs)
        u = float(torch.rand(1, generator=generator, dtype=torch.float64))
        pos = min(int(torch.searchsorted(cdf, torch.tensor([u], dtype=torch.float64), right=True)[0]),
                  order.numel() - 1)
        return Draw(int(order[pos]), INVERSE_CDF, u, state)
    rows = probs.float().view(-1, probs.shape[-1])
    picked = torch.multinomial(rows, num_samples=1, generator=generator)[:, 0]
    token = int(picked[0]) if probs.dim() == 1 else picked
    return Draw(token, MULTINOMIAL, None, state)


def cumulative(probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids with probability > 0, most likely first; their float64 cumulative probabilities ending at 1)."""
    probs = probs.detach().double().flatten()
    kept = torch.nonzero(probs > 0).flatten()
    if kept.numel() == 0:
        raise ValueError("The distribution has no token with probability above 0.")
    order = kept[torch.argsort(probs[kept], descending=True, stable=True)]
    cdf = torch.cumsum(probs[order], dim=0)
    return order, cdf / cdf[-1]


@dataclass
class Choice:
    """One token chosen from one set of logits: the whole pipeline and the draw."""

    pipeline: Pipeline
    token_id: int | torch.Tensor
    forced: bool = False
    draw: Draw | None = None  # None when greedy or forced (nothing random happened)

    @property
    def config(self) -> SamplingConfig:
        return self.pipeline.config

    @property
    def generator_state(self) -> torch.Tensor | None:
        return None if self.draw is None else self.draw.generator_state


def choose(logits: torch.Tensor, context, config: SamplingConfig, generator: torch.Generator | None = None,
           force_token: int | None = None, method: str = MULTINOMIAL) -> Choice:
    """The next token from ``logits``: run the pipeline, then argmax (greedy) or draw.

    ``force_token`` skips the draw (the learner picked the token); the pipeline is still built so the
    page can show where the forced token stood.
    """
    pipe = process(logits, context, config)
    vocab = logits.shape[-1]
    if force_token is not None:
        if not 0 <= int(force_token) < vocab:
            raise ValueError(f"Token id {int(force_token)} is outside the vocabulary (0–{vocab - 1}).")
        return Choice(pipe, int(force_token), forced=True)
    if pipe.greedy:
        top = torch.argmax(pipe.final_scores, dim=-1)
        return Choice(pipe, int(top) if top.dim() == 0 else top)
    picked = draw(pipe.probs, generator, method)
    return Choice(pipe, picked.token_id, draw=picked)


def log_probs(logits: torch.Tensor, context, config: SamplingConfig) -> torch.Tensor:
    """log_softmax(logits) through the non-sampling processors (the repetition penalty), as beam search
    scores candidates in ``generate``: beams do not draw, so temperature and the filters play no part."""
    logp = torch.log_softmax(logits.detach().float().cpu(), dim=-1)
    if config.repetition_penalty != 1.0:
        logp = _apply(RepetitionPenaltyLogitsProcessor(config.repetition_penalty), _as_context(context, logp), logp)
    return logp
