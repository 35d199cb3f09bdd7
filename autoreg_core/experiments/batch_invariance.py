"""Batch invariance: the same step computed alone and in a shared pass, and when that flips a greedy token.

The app's batcher (``batcher.batched_decode``) runs the decode steps of several tabs as one forward pass
over their left-padded caches. Mathematically every row computes what it would alone; in floating point
the sums run in another order and over other shapes, so a row's logits differ from its solo pass by a
little (``bench/batch_exactness.py`` measures about 1e-4 on the embedded model). A greedy choice is an
argmax: the top token changes only if the gap between the top two logits is smaller than what the two
logits can move together, at most twice the largest difference. That is why an API at temperature 0 is
not always reproducible: the batch a request lands in depends on who else is asking.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from autoreg_core.engine import decode
from autoreg_core.runtime.batcher import batched_decode

BATCH_SIZES = (2, 4, 8)  # rows in the shared passes compared with the solo one
BatchedFn = Callable[..., tuple[list[torch.Tensor], float]]  # batched_decode's signature


@dataclass(frozen=True)
class SizeResult:
    rows: int  # rows in the shared pass (the step's own row first)
    max_delta: float  # max |Δ logit| of the step's row vs the solo pass
    top: int  # the shared pass's top token


@dataclass(frozen=True)
class StepInvariance:
    """One step (feed ``ids[-1]`` on a cache of ``ids[:-1]``) alone, and as row 0 of shared passes."""

    solo_top: int
    solo_second: int
    gap: float  # solo logit of the top token − the second's (≥ 0)
    sizes: list[SizeResult]
    top_logit: float = float("nan")  # the solo pass's top logit (how far apart neighbouring floats are near it)

    @property
    def max_delta(self) -> float:
        return max((s.max_delta for s in self.sizes), default=0.0)

    @property
    def flipped(self) -> list[SizeResult]:
        return [s for s in self.sizes if s.top != self.solo_top]

    @property
    def could_flip(self) -> bool:
        """Both logits moving by the largest difference measured, in opposite directions, would close the gap."""
        return self.gap <= 2 * self.max_delta


def _prefilled(bundle, ids: list[int]):
    cache = decode.new_cache(bundle)
    decode.forward(bundle, ids[:-1], cache)
    return cache


def step_invariance(bundle, ids: list[int], others: list[list[int]], sizes=BATCH_SIZES,
                    batched: BatchedFn = batched_decode, prefilled: list | None = None) -> StepInvariance:
    """The step that reads ``ids[-1]`` after ``ids[:-1]``, solo and with ``rows − 1`` of ``others`` beside it.

    Each other row is prefilled on its own text without its last token and steps that token, as another
    tab's decode step would (``prefilled``: those caches, made once by ``prefill_others``); every pass works
    on copies, so each size starts from the same caches.
    """
    ids = [int(i) for i in ids]
    if len(ids) < 2:
        raise ValueError("A decode step needs at least two tokens: one cached, one fed.")
    others = [[int(i) for i in o] for o in others if len(o) >= 2]
    sizes = [int(r) for r in sizes if 1 <= int(r) <= len(others) + 1]
    rest = prefilled if prefilled is not None else prefill_others(bundle, others, sizes)
    own = _prefilled(bundle, ids)
    solo = decode.forward(bundle, [ids[-1:]], decode.copy_cache(own, bundle)).logits[0]
    top2 = torch.topk(solo, 2)
    results = []
    for rows in sizes:
        caches = [decode.copy_cache(c, bundle) for c in [own] + rest[:rows - 1]]
        tokens = [ids[-1]] + [o[-1] for o in others[:rows - 1]]
        logits = batched(bundle, caches, tokens)[0][0]
        results.append(SizeResult(rows, float((logits - solo).abs().max()), int(torch.argmax(logits))))
    return StepInvariance(int(top2.indices[0]), int(top2.indices[1]),
                          float(top2.values[0] - top2.values[1]), results, float(top2.values[0]))


def significant_bits(dtype: torch.dtype) -> int:
    """Significant bits a floating type keeps, the implicit leading one included: float32 24, bfloat16 8,
    float16 11."""
    return 1 - int(math.log2(torch.finfo(dtype).eps))


def float_spacing(value: float, dtype: torch.dtype) -> float:
    """How far apart neighbouring numbers of ``dtype`` are near ``value`` (one unit in the last place): near 20,
    0.125 in bfloat16 and 1.9e-6 in float32."""
    if value == 0 or not math.isfinite(value):
        return float(torch.finfo(dtype).tiny) if value == 0 else float("nan")
    return float(torch.finfo(dtype).eps) * 2.0 ** math.floor(math.log2(abs(value)))


def prefill_others(bundle, others: list[list[int]], sizes=BATCH_SIZES) -> list:
    """The other rows' caches (each text without its last token), as many as the largest size needs."""
    wanted = max([int(r) for r in sizes] or [1]) - 1
    return [_prefilled(bundle, [int(i) for i in o]) for o in others if len(o) >= 2][:wanted]


# ---------------------------------------------------------------- the search for a flip
@dataclass(frozen=True)
class Flip:
    ids: list[int]  # the text whose last step flipped
    rows: int
    solo_top: int
    batched_top: int
    gap: float
    max_delta: float


@dataclass
class FlipSearch:
    """How far a bounded search went, and the first flip it found (None: none in what it searched)."""

    texts: int = 0  # starting texts searched
    steps: int = 0  # steps compared (each against every batch size)
    passes: int = 0  # shared passes run
    found: Flip | None = None
    smallest_gap: float = float("inf")  # the closest call seen: the smallest top-two gap
    largest_delta: float = 0.0
    stopped: bool = False  # ran out of time or steps before the end of the plan
    closest: list[int] = field(default_factory=list)  # the text of the closest call


def search_flip(bundle, prompts: list[list[int]], others: list[list[int]], steps_each: int = 8,
                sizes=BATCH_SIZES, max_steps: int = 64, budget_s: float = 60.0,
                should_stop: Callable[[], bool] = lambda: False,
                batched: BatchedFn = batched_decode) -> FlipSearch:
    """For each prompt and each of its next ``steps_each`` greedy steps (the solo greedy token appended),
    compare the step alone with shared passes of ``sizes`` rows; stop at the first flip, after ``max_steps``
    steps, after ``budget_s`` seconds or when ``should_stop()``."""
    found = FlipSearch()
    others = [[int(i) for i in o] for o in others if len(o) >= 2]
    rest = prefill_others(bundle, others, sizes)
    deadline = time.monotonic() + budget_s
    for prompt in prompts:
        text = [int(i) for i in prompt]
        found.texts += 1
        for _ in range(steps_each):
            if found.steps >= max_steps or time.monotonic() > deadline or should_stop():
                found.stopped = True
                return found
            step = step_invariance(bundle, text, others, sizes, batched, prefilled=rest)
            found.steps += 1
            found.passes += len(step.sizes)
            found.largest_delta = max(found.largest_delta, step.max_delta)
            if step.gap < found.smallest_gap:
                found.smallest_gap, found.closest = step.gap, list(text)
            if step.flipped:
                first = step.flipped[0]
                found.found = Flip(list(text), first.rows, step.solo_top, first.top, step.gap, first.max_delta)
                return found
            text.append(step.solo_top)
    return found
