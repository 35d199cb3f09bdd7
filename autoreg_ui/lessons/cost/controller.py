"""The cost page's race: run, stop, resume, its results, and what the page says about them.

Streamlit runs a page top to bottom; a click on Stop (or on any widget) while a sweep runs
interrupts the script at its next Streamlit call. So the sweep in progress keeps every point in the
state as it is measured (``Running``), and the next run of the page ``recover``s it as a stopped-
early result: Stop keeps what was measured, and ``run(..., resume=True)`` measures what it missed.
Every function takes the state as a mapping (``st.session_state`` on the page, a dict in tests).
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field, replace

from autoreg_core.engine.model_spec import ModelSpec, dtype_name
from autoreg_core.experiments import kv_cost as cost
from autoreg_core.experiments.roofline import StepBudget, step_budget
from autoreg_ui import measuring, measuring_text, messages
from autoreg_ui.format import human_bytes, human_count, ms, ratio
from autoreg_ui.lessons.cost import keys, text

LENGTH_CHOICES = [16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2048]
NOTHING_MEASURED = "The race was stopped before the first length was measured."


# ---------------------------------------------------------------- the state
@dataclass(frozen=True)
class RaceKey:
    """Which race a result belongs to: a model on a device in a dtype, up to a length."""

    model: str
    device: str
    dtype: str
    max_len: int

    @classmethod
    def of(cls, bundle, max_len: int) -> RaceKey:
        return cls(bundle.name, str(bundle.device), dtype_name(bundle.dtype), int(max_len))

    def same_setup(self, other: RaceKey) -> bool:
        """Same model, device and dtype (the longest length may differ)."""
        return (self.model, self.device, self.dtype) == (other.model, other.device, other.dtype)


@dataclass
class Running(measuring.Kept):
    """A sweep in progress, kept like every result (stamp: its ``RaceKey``; result: its points so far), so an
    interruption keeps what was measured."""

    lengths: list[int] = field(default_factory=list)  # what this run measures
    started: float = 0.0  # perf_counter at the start
    before: cost.SweepResult | None = None  # the stopped result this run resumes

    @property
    def key(self) -> RaceKey:
        return self.stamp

    @property
    def points(self) -> list[cost.CostPoint]:
        return self.result


def running(key: RaceKey, lengths: list[int], started: float, points: list[cost.CostPoint] | None = None,
            before: cost.SweepResult | None = None) -> Running:
    return Running(stamp=key, result=list(points or []), lengths=list(lengths), started=started, before=before)


@dataclass
class Race:
    """This tab's races: one ``measuring.Kept`` per race (stamped with its ``RaceKey``; the race page offers
    the other lengths kept for the same setup), and the one running, if any."""

    kept: dict[RaceKey, measuring.Kept] = field(default_factory=dict)
    running: Running | None = None

    @property
    def results(self) -> dict[RaceKey, cost.SweepResult]:
        return {key: found.result for key, found in self.kept.items()}

    def result(self, key: RaceKey) -> cost.SweepResult | None:
        found = measuring.kept(self.kept, key, key)
        return None if found is None else found.result

    def keep(self, key: RaceKey, result: cost.SweepResult) -> cost.SweepResult:
        return measuring.keep(self.kept, key, measuring.Kept(key, result)).result


def race(state: MutableMapping) -> Race:
    """This tab's race (created on first use)."""
    if not isinstance(state.get(keys.COST_RACE), Race):
        state[keys.COST_RACE] = Race()
    return state[keys.COST_RACE]


def length_choices(max_positions: int, cap: int | None = None) -> tuple[list[int], int]:
    """The lengths the slider offers for a model (up to the operator's ``cap``), and the default one."""
    longest = max_positions if cap is None else min(max_positions, cap)
    choices = [n for n in LENGTH_CHOICES if n <= longest] or [longest]
    default = cost.DEFAULT_SWEEP_LENGTH if cost.DEFAULT_SWEEP_LENGTH in choices else choices[-1]
    return choices, default


def other_lengths(state: MutableMapping, key: RaceKey) -> list[int]:
    """Longest lengths with a kept result for the same model, device and dtype."""
    return sorted(k.max_len for k in race(state).kept if k.same_setup(key) and k != key)


def forget(state: MutableMapping) -> None:
    race(state).kept.clear()


# ---------------------------------------------------------------- run, stop, resume
def merge(before: cost.SweepResult | None, after: cost.SweepResult) -> cost.SweepResult:
    """A resumed sweep's points added to those of the sweep it resumes (the planned lengths are the first's)."""
    if before is None:
        return after
    points = sorted(before.points + after.points, key=lambda p: p.length)
    return replace(after, lengths=before.lengths, points=points, prefill_ms=before.prefill_ms + after.prefill_ms,
                   seconds=before.seconds + after.seconds)


def recover(state: MutableMapping) -> None:
    """Keep what an interrupted sweep measured (the Stop click reran the page) as a stopped-early result."""
    current = race(state)
    running, current.running = current.running, None
    if running is None:
        return
    if not running.points and running.before is None:
        messages.say(NOTHING_MEASURED, state=state)
        return
    key = running.key
    partial = cost.SweepResult(model=key.model, device=key.device, dtype=key.dtype, lengths=running.lengths,
                               points=list(running.points), stopped_early=True,
                               seconds=time.perf_counter() - running.started,
                               load_avg=cost.load_average(), cpu_count=os.cpu_count())
    current.keep(key, merge(running.before, partial))


def run(state: MutableMapping, bundle, key: RaceKey, *, resume: bool = False,
        on_progress: Callable[[float, list[cost.CostPoint]], None] | None = None,
        on_wait: Callable[[str], None] | None = None, budget_s: float = measuring.TIME_BUDGET_S,
        **sweep_kwargs) -> cost.SweepResult | None:
    """Measure the race for ``key`` (or, with ``resume``, the lengths its stopped result missed).

    Points are kept in the state as they arrive; if the script is interrupted, ``recover`` keeps them.
    The race takes its turn at the server's one measuring gate (``measuring.turn``; ``on_wait`` hears
    about the line). A failure (out of memory, an odd architecture ...) becomes a message, never an exception.
    """
    current = race(state)
    before = current.result(key) if resume else None
    lengths = before.remaining if before is not None else cost.sample_lengths(key.max_len)
    now_running = current.running = running(key, lengths, time.perf_counter(), before=before)

    def progress(fraction: float, point: cost.CostPoint) -> None:
        now_running.points.append(point)
        if on_progress is not None:  # every Streamlit call in here is where a Stop click lands
            on_progress(fraction, (before.points if before else []) + now_running.points)

    try:
        with measuring.turn("the naive vs cached race", on_wait):
            deadline = time.perf_counter() + budget_s  # the budget counts from the turn, not the wait
            result = cost.sweep(bundle, lengths, should_stop=lambda: time.perf_counter() > deadline,
                                on_progress=progress, **sweep_kwargs)
    except measuring.Busy as exc:
        current.running = None
        messages.say(str(exc), state=state)
        return None
    except Exception as exc:  # noqa: BLE001 - a message, not a crash
        current.running = None
        messages.say(measuring_text.failed(exc), state=state)
        return None
    current.running = None
    if not result.points and before is None:
        messages.say(NOTHING_MEASURED, state=state)
        return None
    if result.stopped_early:
        messages.say(measuring_text.budget_ran_out(budget_s), state=state)
    return current.keep(key, merge(before, result))


# ---------------------------------------------------------------- what the page says
def csv_name(result: cost.SweepResult) -> str:
    safe_model = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in result.model)
    return f"kv_cache_race_{safe_model}_{result.device}_{max(result.lengths)}.csv"


def total_time_sentence(points: list[cost.CostPoint]) -> str | None:
    """Time to generate T tokens each way, from the per-step times summed (None before any point)."""
    cum = cost.cumulative_ms(points)
    if not len(cum["T"]):
        return None
    T, naive, cached = int(cum["T"][-1]), float(cum["naive"][-1]), float(cum["cached"][-1])
    return (f"Generating **{T:,} tokens** one after another: about **{naive / 1000:,.1f} s** naive vs "
            f"**{cached / 1000:,.1f} s** with the cache, **{naive / cached:,.1f}×** faster over the whole run "
            "(per-step times interpolated between the measured lengths and summed).")


def count_rows(spec: ModelSpec, T: int) -> list[dict]:
    """``spec.count_table`` written for the page: whole numbers with separators, FLOPs in k/M/G/T."""
    rows = []
    for row in spec.count_table(T):
        show = human_count if row["quantity"] == "FLOPs" else (lambda v: f"{v:,}")
        rows.append({"quantity": row["quantity"], "naive": show(row["naive"]), "KV cache": show(row["KV cache"]),
                     "naive ÷ cache": f"{row['naive / cached']:,.1f}×"})
    return rows


def naive_counts_sentence(T: int) -> str:
    """The two naive counts quoted for T tokens, and what each one counts."""
    return (f"Two naive counts are quoted for T = {T:,} tokens: **T² = {T * T:,}** is the rough one (about T "
            f"positions recomputed at each of T steps); **T(T+1)/2 = {T * (T + 1) // 2:,}** is the exact number "
            "of positions processed (the step that writes token L processes L positions). Both count positions "
            "through the weights; the dot-product rows count attention scores.")


def attention_share(spec: ModelSpec, L: int) -> float:
    """Share of a cached step's FLOPs spent on attention over the cache at length L."""
    return spec.attention_flops_per_key * L / spec.flops_step(L, True)


def naive_attention_share(spec: ModelSpec, L: int) -> float:
    """Share of a naive step's FLOPs spent on causal attention at length L (L(L+1)/2 keys)."""
    return spec.attention_flops_per_key * (L * (L + 1) // 2) / spec.flops_step(L, False)


def per_doubling(short: float, long: float, short_len: int, long_len: int) -> float:
    """A ratio of two values at two lengths, as a factor per doubling of the length."""
    return (long / short) ** (1 / math.log2(long_len / short_len))


def naive_growth(spec: ModelSpec, points: list[cost.CostPoint]) -> str | None:
    """The naive step's measured growth over the longest doubling the race covers, and the counted one."""
    if len(points) < 2:
        return None
    last = max(points, key=lambda p: p.length)
    shorter = [p for p in points if p.length <= last.length // 2] or [p for p in points if p.length < last.length]
    if not shorter:
        return None
    prev = max(shorter, key=lambda p: p.length)
    measured = per_doubling(prev.naive_ms, last.naive_ms, prev.length, last.length)
    counted = per_doubling(spec.flops_step(prev.length, False), spec.flops_step(last.length, False),
                           prev.length, last.length)
    return text.naive_growth_sentence(measured, prev.length, last.length, counted,
                                      naive_attention_share(spec, last.length))


def throughputs(spec: ModelSpec, points: list[cost.CostPoint]) -> dict[str, float] | None:
    """FLOPs per ms that best map each count onto its measured times (None before any measurement)."""
    if not points:
        return None
    return {kind: cost.flops_per_ms(spec, points, kind == "cached") for kind in ("naive", "cached")}


def measured_vs_counted(spec: ModelSpec, points: list[cost.CostPoint]) -> str:
    """The fits to the measured times and the throughput each kind of step reached (markdown)."""
    scale = throughputs(spec, points)
    return ("Fits to the measured step times:\n" + "\n".join(fit_lines(cost.fits(points))) + "\n\n"
            "The right axes are scaled by one throughput each, chosen to best match the count: the naive steps run "
            f"at about **{scale['naive'] / 1e6:,.1f} GFLOP/s**, the cached steps at only "
            f"**{scale['cached'] / 1e6:,.1f} GFLOP/s**. Same model, same machine: the difference is the subject of "
            "the next section." + (f"\n\n{growth}" if (growth := naive_growth(spec, points)) else ""))


def fit_lines(fitted: dict[str, cost.Fit | None]) -> list[str]:
    """The fitted polynomials as markdown bullet lines (ms as a function of L)."""
    lines = []
    naive, cached = fitted.get("naive"), fitted.get("cached")
    if naive is not None:
        c, b, a = naive.coeffs
        lines.append(f"- naive: {a:,.2f} {b:+.4f}·L {c:+.2e}·L² ms (R² = {naive.r2:.3f})")
    if cached is not None:
        b, a = cached.coeffs
        lines.append(f"- cached: {a:,.2f} {b:+.5f}·L ms (R² = {cached.r2:.3f})")
    return lines


def decode_budget(spec: ModelSpec, L: int, bandwidth: float, peak_flops: float) -> StepBudget:
    """One decode step (batch 1) at length L against this machine's roofs (the engine's roofline)."""
    return step_budget(spec, 1, L, bandwidth, peak_flops)


def verdict(budget: StepBudget, measured_ms: float | None) -> str:
    """What the measured decode step says next to the bandwidth and compute limits (markdown)."""
    line = (f"**Bandwidth limit:** {human_bytes(budget.bytes_read)} ÷ {human_bytes(budget.bandwidth)}/s ≈ "
            f"**{budget.memory_ms:,.1f} ms** per decode step at best, whereas the FLOPs alone would need only "
            f"{budget.compute_ms:,.1f} ms at the matmul peak")
    if measured_ms is None:
        return line + ". Run the race to compare with a measured decode step."
    ratio = measured_ms / budget.memory_ms
    line += (f"; the measured decode step at L = {budget.L} took **{measured_ms:,.1f} ms** "
             f"({ratio:,.1f}× the bandwidth limit).")
    if ratio > 4:
        return line + (" That is well above both limits: other work on the machine during the race, or the fixed "
                       "cost of launching each small operation (Python, kernel dispatch), weighs more than the bytes.")
    if measured_ms < budget.compute_ms * 2:
        return line + (f" That is within 2× of the compute limit: on this machine the measured matmul peak is low "
                       f"enough that the arithmetic ({budget.compute_ms:,.1f} ms at the peak) weighs as much as "
                       "streaming the bytes.")
    return line + " Most of a decode step is spent streaming bytes, not doing arithmetic."


def roofline_marks(spec: ModelSpec, point: cost.CostPoint) -> list[dict]:
    """The measured decode and naive steps at one length as (intensity, achieved FLOP/s) points."""
    return [{"name": f"{name} step, L={point.length}", "intensity": spec.arithmetic_intensity(point.length, cached),
             "achieved": spec.flops_step(point.length, cached) / (step_ms / 1000.0)}
            for name, cached, step_ms in (("decode", True, point.cached_ms), ("naive", False, point.naive_ms))]


def headline(result: cost.SweepResult) -> list[tuple[str, str]]:
    """(label, value) of the page's metrics for the longest measured length."""
    last = result.points[-1]
    return [(f"Naive step at L = {last.length}", ms(last.naive_ms)),
            (f"Cached step at L = {last.length}", ms(last.cached_ms)),
            (f"Speed-up per step at L = {last.length}", ratio(last.speedup)),
            ("Race took", f"{result.seconds:,.1f} s")]


def warnings(result: cost.SweepResult) -> list[str]:
    """What the reader should know before trusting the curves: a stopped race, a busy machine."""
    out = []
    if result.stopped_early:
        out.append(f"Stopped early at length {result.last_length}: {len(result.points)} of {len(result.lengths)} "
                   "lengths were measured. The charts show those; **Continue** measures the rest.")
    if result.busy:
        out.append(f"The machine was busy during this race (load average {result.load_avg:.1f} on "
                   f"{result.cpu_count} cores): other processes took CPU time, so these times are inflated and "
                   "noisy. Run the race again when it is quieter for clean curves.")
    return out


def roof_metrics(budget: StepBudget, dtype: str) -> list[tuple[str, str]]:
    return [("Copy bandwidth (read + write)", f"{human_bytes(budget.bandwidth)}/s"),
            (f"Matmul peak ({dtype})", f"{budget.peak_flops / 1e9:,.1f} GFLOP/s"),
            ("Ridge point", f"{budget.ridge:,.1f} FLOP/byte")]
