"""Prefill vs decode in the units people quote: time to first token, tokens per second, and what one
prompt token costs inside a prefill against what one generated token costs in a decode step.

``greedy_run`` is the plain generation loop (prefill, then one token per decode pass), timed and with
the cache measured after every pass; the sliding-window comparison (``window``) and the exposure-bias
branch (``teacher``) reuse it. ``prefill_sweep`` times prefills of growing prefixes of one prompt
next to a decode step at the same length. ``worked_counts`` is the counting of "a P-token prompt and
N new tokens" with the model's own ``ModelSpec``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from autoreg_core.engine import decode
from autoreg_core.engine.kv_cache import PhaseTimes, layer_shapes, measured_bytes
from autoreg_core.engine.loop import generation_loop
from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.engine.timing import fastest_ms

SWEEP_START = 8  # the shortest prefill of a sweep (tokens)


def stored_positions(cache) -> int:
    """Positions actually held in the cache's K/V tensors (a sliding window holds fewer than it has seen)."""
    return max((shape.keys[2] for shape in layer_shapes(cache)), default=0)


class PerToken:
    """Prefill time per prompt token, and a decode step against it, read from ``self.phases``
    (``cache.PhaseTimes``, where the arithmetic is written once)."""

    @property
    def prefill_ms_per_token(self) -> float:
        return self.phases.prefill_ms_per_token

    @property
    def decode_over_prefill(self) -> float:
        """How many prompt tokens the prefill processes in the time of one decode step."""
        return self.phases.ratio


# ---------------------------------------------------------------- one timed greedy generation
@dataclass
class GreedyRun(PerToken):
    """A greedy generation, timed the way serving systems report it."""

    prompt_len: int
    ids: list[int]  # prompt + generated
    prefill_ms: float  # the prefill forward pass alone
    first_token_ms: float  # time to first token: prefill + choosing the first token
    step_ms: list[float] = field(default_factory=list)  # each later token: one decode pass + the choice
    cache_positions: list[int] = field(default_factory=list)  # held after the prefill, then after each pass
    cache_bytes: list[int] = field(default_factory=list)  # measured from the tensors, same points
    stopped_early: bool = False

    @property
    def generated_ids(self) -> list[int]:
        return self.ids[self.prompt_len:]

    @property
    def phases(self) -> PhaseTimes:
        """The prefill per prompt token against the median later token (one decode pass + the choice)."""
        return PhaseTimes.measured(self.prefill_ms, self.prompt_len, self.step_ms)

    @property
    def decode_ms_median(self) -> float:
        return self.phases.decode_ms_median

    @property
    def decode_tokens_per_second(self) -> float:
        """The streaming rate after the first token (what "tokens per second" usually means)."""
        total = sum(self.step_ms)
        return 1000.0 * len(self.step_ms) / total if total > 0 else float("nan")

    @property
    def total_ms(self) -> float:
        return self.first_token_ms + sum(self.step_ms)

    def _note_cache(self, cache) -> None:
        self.cache_positions.append(stored_positions(cache))
        self.cache_bytes.append(measured_bytes(cache))


def greedy_run(bundle, prompt_ids: list[int], n_new: int, cache=None, *, stop_at_eos: bool = True,
               should_stop: Callable[[], bool] | None = None) -> GreedyRun:
    """Generate up to ``n_new`` tokens greedily, on ``cache`` or a new full cache.

    Ends at EOS unless ``stop_at_eos`` is False (a timing wants exactly ``n_new`` tokens).

    The first token comes out of the prefill, so ``n_new`` tokens take one prefill and ``n_new − 1``
    decode passes; the last token chosen is never fed back.
    """
    if n_new < 1 or not prompt_ids:
        raise ValueError("A greedy run needs a prompt and at least one new token.")
    cache = decode.new_cache(bundle) if cache is None else cache
    ids = [int(i) for i in prompt_ids]
    start = time.perf_counter()
    fwd = decode.forward(bundle, ids, cache)
    run = GreedyRun(len(prompt_ids), ids, fwd.ms, 0.0)
    run._note_cache(cache)
    eos = set(bundle.eos_token_ids) if stop_at_eos else set()
    last = start
    for step in generation_loop(bundle, cache, ids, fwd.logits[0], n_new, eos=eos, should_stop=should_stop):
        now = time.perf_counter()
        if step.pass_ms is None:
            run.first_token_ms = (now - start) * 1000.0  # prefill + choosing the first token
        else:
            run.step_ms.append((now - last) * 1000.0)  # one decode pass + the choice
            run._note_cache(cache)
        last = now
    run.stopped_early = len(run.generated_ids) < n_new and not (run.generated_ids and run.generated_ids[-1] in eos)
    return run


# ---------------------------------------------------------------- the prefill sweep
@dataclass(frozen=True)
class PrefillPoint(PerToken):
    """At one prompt length: the whole prefill, and one decode step on a cache of that length."""

    length: int
    prefill_ms: float  # fastest of the repeats: one pass over the first ``length`` prompt tokens
    decode_ms: float  # fastest of the repeats: one token fed onto a cache holding ``length`` positions

    @property
    def phases(self) -> PhaseTimes:
        """The prefill's time per prompt token against the one decode step."""
        return PhaseTimes.measured(self.prefill_ms, self.length, [self.decode_ms])


def sweep_lengths(n_tokens: int, max_positions: int, start: int = SWEEP_START) -> list[int]:
    """Doubling prefix lengths from ``start`` up to the prompt (leaving room for one decode step)."""
    top = min(int(n_tokens), int(max_positions) - 1)
    if top < 1:
        return []
    lengths, length = [], min(start, top)
    while length < top:
        lengths.append(length)
        length *= 2
    return lengths + [top]


def measure_prefill(bundle, ids: list[int], length: int, repeats: int = 2) -> PrefillPoint:
    """Time a prefill of ``ids[:length]`` and one decode step after it, fastest of ``repeats`` each.

    The fastest, not the mean: other work on a shared machine only ever adds time.
    """
    if not 1 <= length <= len(ids):
        raise ValueError(f"Length {length} is outside the prompt (1–{len(ids)} tokens).")
    next_token = ids[length] if length < len(ids) else ids[-1]
    def one() -> tuple[float, float]:
        cache = decode.new_cache(bundle)
        return decode.forward(bundle, ids[:length], cache).ms, decode.forward(bundle, [next_token], cache).ms

    (prefill_ms, decode_ms), _ = fastest_ms(one, repeats)
    return PrefillPoint(length, prefill_ms, decode_ms)


def prefill_sweep(bundle, ids: list[int], lengths: list[int], *, repeats: int = 2,
                  should_stop: Callable[[], bool] | None = None,
                  on_point: Callable[[PrefillPoint], None] | None = None) -> list[PrefillPoint]:
    """``measure_prefill`` at each length, shortest first, after one untimed warm-up pass.

    ``should_stop()`` is asked before every length; the points measured so far are returned.
    """
    decode.forward(bundle, ids[:min(len(ids), SWEEP_START)], decode.new_cache(bundle))  # warm-up
    points: list[PrefillPoint] = []
    for length in sorted(set(lengths)):
        if should_stop is not None and should_stop():
            break
        point = measure_prefill(bundle, ids, length, repeats)
        points.append(point)
        if on_point is not None:
            on_point(point)
    return points


# ---------------------------------------------------------------- the worked example, counted
@dataclass(frozen=True)
class WorkedCounts:
    """A P-token prompt and N new tokens: what each way of generating pushes through the model."""

    prompt: int
    new: int
    naive_positions: int  # every step re-reads the whole text: P + (P+1) + … + (P+N−1)
    cached_positions: int  # the prompt once, then one position per decode pass: P + N − 1
    naive_dot_products: int  # QKᵀ scores, all layers and heads
    cached_dot_products: int


def worked_counts(spec: ModelSpec, prompt: int, new: int) -> WorkedCounts:
    """The counts as differences of ``ModelSpec``'s totals from an empty start (T = P + N − 1 positions)."""
    if prompt < 1 or new < 1:
        raise ValueError("The prompt and the new tokens must be at least one token each.")
    last = prompt + new - 1  # the last token is chosen, never fed
    return WorkedCounts(
        prompt, new,
        naive_positions=spec.positions_total(last, False) - spec.positions_total(prompt - 1, False),
        cached_positions=spec.positions_total(last, True),
        naive_dot_products=spec.dot_products_total(last, False) - spec.dot_products_total(prompt - 1, False),
        cached_dot_products=spec.dot_products_total(last, True))
