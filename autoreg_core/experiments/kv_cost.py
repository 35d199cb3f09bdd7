"""What a token costs, with and without the KV cache, timed live on the loaded model.

Two ways to produce the token at position L (the sequence so far holds L − 1 tokens):

* **naive** — run all L tokens through the model again (no cache): a prefill of the whole
  sequence, every step. Per step the work grows like L, so T tokens cost T(T+1)/2 positions.
* **KV cache** — feed only the new token; keys and values of the L − 1 earlier positions are read
  from the cache. Per step the weights are used once (plus an attention term ∝ L), so T tokens
  cost T positions through the weights.

The counts (positions, dot products, FLOPs, bytes read) live in ``ModelSpec`` (``bundle.spec``);
this module measures: ``sweep`` times both kinds of step at a list of lengths through
``decode.forward`` (the one model call), then fits, totals and the machine's two roofs (memory
bandwidth, matmul throughput) help read the times against the counts.
"""
from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from autoreg_core.engine import decode
from autoreg_core.engine.loading import ModelBundle
from autoreg_core.engine.model_spec import ModelSpec, dtype_name
from autoreg_core.engine.timing import fastest_ms, timed_ms

DEFAULT_SWEEP_LENGTH = 512


# ---------------------------------------------------------------- which lengths to time
def sample_lengths(max_length: int, linear_points: int = 8) -> list[int]:
    """Powers of two (short lengths, where the curves bend) plus an even grid (for the fits)."""
    max_length = int(max_length)
    if max_length < 1:
        raise ValueError("The maximum length must be at least 1.")
    out = {max_length}
    p = 1
    while p <= max_length:
        out.add(p)
        p *= 2
    step = max(1, max_length // linear_points)
    out.update(range(step, max_length + 1, step))
    return sorted(out)


# ---------------------------------------------------------------- what a sweep measures
@dataclass(frozen=True)
class CostPoint:
    """One length: time of a cached decode step and of a naive full recompute (fastest of the repeats)."""

    length: int
    cached_ms: float
    naive_ms: float
    cached_repeats: int
    naive_repeats: int
    cache_positions: int = 0  # positions in the cache when the cached step was timed (always length − 1)

    @property
    def speedup(self) -> float:
        return self.naive_ms / self.cached_ms if self.cached_ms > 0 else float("nan")


@dataclass
class SweepResult:
    model: str
    device: str
    dtype: str
    lengths: list[int]  # planned
    points: list[CostPoint] = field(default_factory=list)  # measured, ascending length
    stopped_early: bool = False
    prefill_ms: float = 0.0  # chunked prefill work done to build the cache (sum)
    seconds: float = 0.0  # wall time of the whole sweep
    load_avg: float | None = None  # 1-minute load average at the end (None where the OS has none)
    cpu_count: int | None = None

    @property
    def busy(self) -> bool:
        """Other processes competed for the CPU: more runnable work than cores."""
        return bool(self.load_avg is not None and self.cpu_count and self.load_avg > self.cpu_count + 0.5)

    @property
    def complete(self) -> bool:
        return not self.stopped_early and len(self.points) == len(self.lengths)

    @property
    def last_length(self) -> int:
        return self.points[-1].length if self.points else 0

    @property
    def remaining(self) -> list[int]:
        """Planned lengths not measured yet (what a resumed sweep would measure)."""
        done = {p.length for p in self.points}
        return [L for L in self.lengths if L not in done]

    def rows(self) -> list[dict]:
        """The measured table (also the CSV download)."""
        return [{"length": p.length, "cached_step_ms": round(p.cached_ms, 3), "naive_step_ms": round(p.naive_ms, 3),
                 "speedup": round(p.speedup, 3), "cached_repeats": p.cached_repeats,
                 "naive_repeats": p.naive_repeats} for p in self.points]


# ---------------------------------------------------------------- measuring
def _warm_up(bundle: ModelBundle, ids: torch.Tensor) -> None:
    """First calls allocate and pick kernels; keep that out of the numbers."""
    n = min(16, ids.shape[1])
    decode.forward(bundle, ids[:, :n])
    warm = decode.new_cache(bundle)
    decode.forward(bundle, ids[:, :n], warm)
    decode.forward(bundle, ids[:, n - 1:n], warm)


def _extend(bundle: ModelBundle, cache, ids: torch.Tensor, positions: int) -> float:
    """Grow ``cache`` to ``positions`` tokens of ``ids`` in one chunk (a prefill of the gap); its ms."""
    have = cache.get_seq_length()
    if have >= positions:
        return 0.0
    return decode.forward(bundle, ids[:, have:positions], cache).ms


def _measure(bundle: ModelBundle, cache, ids: torch.Tensor, L: int, cached_repeats: tuple[int, int],
             naive_repeats: tuple[int, int]) -> CostPoint:
    """Time one cached step (cache at L − 1, one token fed, cropped back) and one naive pass of L tokens."""
    positions = cache.get_seq_length()
    if positions != L - 1:
        raise RuntimeError(f"cache holds {positions} tokens, expected {L - 1}")
    new_token = ids[:, L - 1:L]

    def cached_step() -> float:
        ms = decode.forward(bundle, new_token, cache).ms
        cache.crop(-1)  # back to L − 1 tokens for the next repeat
        return ms

    cached_ms, cached_n = fastest_ms(cached_step, *cached_repeats, min_seconds=0.1)
    naive_ms, naive_n = fastest_ms(lambda: decode.forward(bundle, ids[:, :L]).ms, *naive_repeats, min_seconds=0.3)
    return CostPoint(L, cached_ms, naive_ms, cached_n, naive_n, positions)


def sweep(bundle: ModelBundle, lengths: list[int], *, should_stop: Callable[[], bool] | None = None,
          on_progress: Callable[[float, CostPoint], None] | None = None,
          seed: int = 0, warmup: bool = True, cached_repeats: tuple[int, int] = (3, 7),
          naive_repeats: tuple[int, int] = (1, 5)) -> SweepResult:
    """Time a cached decode step and a naive step at each length, shortest first.

    The cache grows by chunked prefill from one length to the next (so the whole sweep does about one
    prefill of the longest length in total); at length L it holds L − 1 tokens, one token is fed and
    timed, and ``crop(-1)`` removes it again before the next repeat. ``should_stop()`` is checked before
    every length: the points measured so far are kept and ``stopped_early`` is set. After every point,
    ``on_progress(fraction of the planned work done, point)``. ``*_repeats`` = (at least, at most) timed
    runs per point.
    """
    lengths = sorted({int(L) for L in lengths})
    if not lengths or lengths[0] < 1:
        raise ValueError("Lengths must be positive.")
    if lengths[-1] > bundle.spec.max_positions:
        raise ValueError(f"{bundle.name} reads at most {bundle.spec.max_positions} positions; asked for {lengths[-1]}.")
    ids = torch.randint(0, bundle.spec.vocab, (1, lengths[-1]), generator=torch.Generator().manual_seed(seed))
    result = SweepResult(model=bundle.name, device=str(bundle.device), dtype=dtype_name(bundle.dtype),
                         lengths=lengths)
    total_work, done_work = float(sum(lengths)), 0.0
    start = time.perf_counter()
    if warmup:
        _warm_up(bundle, ids)
    cache = decode.new_cache(bundle)
    for L in lengths:
        if should_stop is not None and should_stop():
            result.stopped_early = True
            break
        result.prefill_ms += _extend(bundle, cache, ids, L - 1)
        point = _measure(bundle, cache, ids, L, cached_repeats, naive_repeats)
        result.points.append(point)
        done_work += L
        if on_progress is not None:
            on_progress(done_work / total_work, point)
    result.seconds = time.perf_counter() - start
    result.load_avg, result.cpu_count = load_average(), os.cpu_count()
    return result


# ---------------------------------------------------------------- reading the measurements
@dataclass
class Fit:
    """Least-squares polynomial in L (coefficients highest power first) and its R²."""

    coeffs: list[float]
    r2: float

    def __call__(self, x):
        return np.polyval(self.coeffs, np.asarray(x, dtype=float))


def fit_poly(x, y, degree: int) -> Fit | None:
    """None when there are too few points for the degree."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) <= degree:
        return None
    coeffs = np.polyfit(x, y, degree)
    pred = np.polyval(coeffs, x)
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return Fit([float(c) for c in coeffs], r2)


def fits(points: list[CostPoint]) -> dict[str, Fit | None]:
    """A quadratic through the naive step times and a line through the cached ones (ms vs L)."""
    L = [p.length for p in points]
    return {"naive": fit_poly(L, [p.naive_ms for p in points], 2),
            "cached": fit_poly(L, [p.cached_ms for p in points], 1)}


def cumulative_ms(points: list[CostPoint]) -> dict[str, np.ndarray]:
    """Time to generate T tokens (T = 1 … last measured length), summing per-step times interpolated
    linearly between the measured lengths."""
    if not points:
        return {"T": np.array([], dtype=int), "naive": np.array([]), "cached": np.array([])}
    L = np.array([p.length for p in points], dtype=float)
    T = np.arange(1, int(L[-1]) + 1)
    out = {"T": T}
    for kind in ("naive", "cached"):
        y = np.array([getattr(p, f"{kind}_ms") for p in points], dtype=float)
        out[kind] = np.cumsum(np.interp(T, L, y))
    return out


def flops_per_ms(spec: ModelSpec, points: list[CostPoint], cached: bool) -> float:
    """The throughput that maps the FLOP count onto the measured times best (least squares through 0)."""
    F = np.array([spec.flops_step(p.length, cached) for p in points], dtype=float)
    t = np.array([p.cached_ms if cached else p.naive_ms for p in points], dtype=float)
    denom = float((t * t).sum())
    return float((F * t).sum() / denom) if denom > 0 else float("nan")


# ---------------------------------------------------------------- the machine
def _best_seconds(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    return fastest_ms(lambda: timed_ms(fn, device)[1], repeats)[0] / 1000.0


def measure_bandwidth(device: torch.device | str = "cpu", megabytes: int = 128, repeats: int = 5) -> float:
    """Copy bandwidth in bytes/s (bytes read + bytes written), best of a few copies of a large buffer."""
    device = torch.device(device)
    n = megabytes * 2**20 // 4
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)  # touch the pages once
    best = _best_seconds(lambda: dst.copy_(src), device, repeats)
    return 2 * n * 4 / best


def measure_matmul_flops(device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32,
                         n: int = 1024, repeats: int = 3) -> float:
    """Dense matmul throughput in FLOP/s (best of a few n×n products): the compute roof."""
    device = torch.device(device)
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    a @ b
    return 2 * n**3 / _best_seconds(lambda: a @ b, device, repeats)


def load_average() -> float | None:
    """The 1-minute load average (runnable processes), where the OS reports one."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(device: torch.device | str = "cpu") -> dict:
    """What the timings depend on: CPU, threads, torch, device, OpenMP wait policy, load."""
    device = torch.device(device)
    info = {"platform": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
            "cpu": _cpu_name(), "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "device": str(device), "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
            "load_avg_1min": load_average()}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


__all__ = [
    "CostPoint", "DEFAULT_SWEEP_LENGTH", "Fit", "SweepResult", "cumulative_ms",
    "fit_poly", "fits", "flops_per_ms", "load_average", "machine_info", "measure_bandwidth",
    "measure_matmul_flops", "sample_lengths", "sweep",
]
