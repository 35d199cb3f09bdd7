"""What a token costs, with and without the KV cache: counts from the model's shape, and live timings.

Two ways to produce the token at position L (the sequence so far holds L − 1 tokens):

* **naive** — run all L tokens through the model again (``use_cache=False``): a prefill of the whole
  sequence, every step. Per step the work grows like L, so T tokens cost ~T²/2 positions.
* **KV cache** — feed only the new token; keys and values of the L − 1 earlier positions are read
  from the cache. Per step the work is ~constant (plus an attention term ∝ L), so T tokens cost ~T.

Counting conventions (one multiply-add = 2 FLOPs), for a model with ``N_body`` weights in its
layers, hidden size d, vocabulary V, ``n_l`` layers, ``n_h`` query heads of size ``d_h``:

* a token going through the layers: 2·N_body FLOPs (every weight used once);
* the LM head, for the one position whose logits we need: 2·d·V FLOPs;
* one query attending c positions: 4·n_l·n_h·d_h·c FLOPs (QKᵀ and the weighted sum of V).

Nothing here imports Streamlit; timings are wall-clock ``perf_counter`` around real forward passes.
"""
from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch
from transformers import DynamicCache

from .loading import ModelBundle

MAX_SWEEP_LENGTH = 2048
DEFAULT_SWEEP_LENGTH = 512


# ---------------------------------------------------------------- the model's shape
@dataclass(frozen=True)
class ModelDims:
    """The numbers the counts need, read from a loaded model."""

    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    n_params: int  # every parameter, tied weights counted once
    body_params: int  # weights inside the layers (no token embedding, no LM head)
    bytes_per_param: int

    @classmethod
    def from_bundle(cls, bundle: ModelBundle) -> "ModelDims":
        model = bundle.model
        skip = set()
        for module in (model.get_input_embeddings(), model.get_output_embeddings()):
            if module is not None:
                skip.update(id(p) for p in module.parameters())
        seen: set[int] = set()
        body = 0
        for p in model.parameters():
            if id(p) in seen or id(p) in skip:
                continue
            seen.add(id(p))
            body += p.numel()
        return cls(n_layers=bundle.n_layers, n_heads=bundle.n_heads, n_kv_heads=bundle.n_kv_heads,
                   head_dim=bundle.head_dim, hidden=int(bundle.config.hidden_size), vocab=bundle.vocab_size,
                   n_params=bundle.n_params, body_params=int(body),
                   bytes_per_param=torch.empty((), dtype=bundle.dtype).element_size())

    # -------------------------------------------- per token / per position
    @property
    def lm_head_params(self) -> int:
        return self.hidden * self.vocab

    @property
    def flops_layers_per_token(self) -> int:
        """2·N_body: one multiply-add per weight of the layers."""
        return 2 * self.body_params

    @property
    def flops_lm_head(self) -> int:
        """2·d·V: logits for one position."""
        return 2 * self.lm_head_params

    @property
    def attention_flops_per_key(self) -> int:
        """4·n_l·n_h·d_h: one query against one cached position (QKᵀ and ·V), over every layer."""
        return 4 * self.n_layers * self.n_heads * self.head_dim

    @property
    def cache_bytes_per_token(self) -> int:
        """2·n_l·n_kv·d_h·bytes: the K and V rows one position adds to the cache."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * self.bytes_per_param

    @property
    def weight_bytes_per_step(self) -> int:
        """Weights a decode step must read: the layers and the LM head (the embedding is one row)."""
        return (self.body_params + self.lm_head_params) * self.bytes_per_param


# ---------------------------------------------------------------- counts
def positions_total(T: int, cached: bool) -> int:
    """Token positions pushed through the model to generate a sequence of length T from scratch."""
    return T if cached else T * (T + 1) // 2


def dot_products_step(dims: ModelDims, L: int, cached: bool) -> int:
    """QKᵀ scores computed by the step that produces position L (causal: position i sees i keys)."""
    per_query_head = dims.n_layers * dims.n_heads
    return per_query_head * (L if cached else L * (L + 1) // 2)


def dot_products_total(dims: ModelDims, T: int, cached: bool) -> int:
    """Σ over steps L = 1..T of ``dot_products_step``."""
    per = dims.n_layers * dims.n_heads
    return per * (T * (T + 1) // 2 if cached else T * (T + 1) * (T + 2) // 6)


def flops_step(dims: ModelDims, L: int, cached: bool) -> int:
    """FLOPs of the step producing position L: cached = 1 position, naive = all L positions."""
    positions = 1 if cached else L
    keys = L if cached else L * (L + 1) // 2
    return positions * dims.flops_layers_per_token + dims.flops_lm_head + keys * dims.attention_flops_per_key


def flops_total(dims: ModelDims, T: int, cached: bool) -> int:
    """Σ over steps L = 1..T of ``flops_step`` (closed form)."""
    positions = positions_total(T, cached)
    keys = T * (T + 1) // 2 if cached else T * (T + 1) * (T + 2) // 6
    return positions * dims.flops_layers_per_token + T * dims.flops_lm_head + keys * dims.attention_flops_per_key


def decode_bytes(dims: ModelDims, L: int) -> dict:
    """Bytes a decode step at length L reads: every weight once, plus the K and V of L positions."""
    weights = dims.weight_bytes_per_step
    cache = L * dims.cache_bytes_per_token
    return {"weights": weights, "cache": cache, "total": weights + cache}


def arithmetic_intensity(dims: ModelDims, L: int, cached: bool) -> float:
    """FLOPs per byte read from memory. Naive: weights read once for all L positions (activations ignored)."""
    if cached:
        return flops_step(dims, L, True) / decode_bytes(dims, L)["total"]
    return flops_step(dims, L, False) / dims.weight_bytes_per_step


def count_table(dims: ModelDims, T: int) -> list[dict]:
    """Rows for the page: what generating T tokens costs both ways."""
    rows = []
    for what, fn in (("token positions processed", lambda c: positions_total(T, c)),
                     ("attention dot products (QKᵀ)", lambda c: dot_products_total(dims, T, c)),
                     ("FLOPs", lambda c: flops_total(dims, T, c))):
        naive, cached = fn(False), fn(True)
        rows.append({"quantity": what, "naive": naive, "KV cache": cached, "naive / cached": naive / cached})
    return rows


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


# ---------------------------------------------------------------- measuring
@dataclass
class CostPoint:
    """One length: time of a cached decode step and of a naive full recompute (fastest of the repeats)."""

    length: int
    cached_ms: float
    naive_ms: float
    cached_repeats: int
    naive_repeats: int

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
    prefill_ms: float = 0.0  # chunked prefill work done to build the caches (sum)
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

    def to_dict(self) -> dict:
        d = asdict(self)
        d["points"] = [asdict(p) for p in self.points]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        d = dict(d)
        d["points"] = [CostPoint(**p) for p in d.get("points", [])]
        return cls(**d)

    def rows(self) -> list[dict]:
        """The measured table (also the CSV download)."""
        return [{"length": p.length, "cached_step_ms": round(p.cached_ms, 3), "naive_step_ms": round(p.naive_ms, 3),
                 "speedup": round(p.speedup, 3), "cached_repeats": p.cached_repeats,
                 "naive_repeats": p.naive_repeats} for p in self.points]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _forward(model, ids: torch.Tensor, cache=None) -> None:
    """One forward pass; only the last position's logits are computed (``logits_to_keep=1``)."""
    kwargs = {"input_ids": ids, "use_cache": cache is not None}
    if cache is not None:
        kwargs["past_key_values"] = cache
    try:
        model(**kwargs, logits_to_keep=1)
    except TypeError:  # an architecture without logits_to_keep: full logits, slightly more work
        model(**kwargs)


def _time_repeats(fn: Callable[[], None], device: torch.device, min_repeats: int, max_repeats: int,
                  min_seconds: float) -> tuple[float, int]:
    """Fastest ms of ``fn`` over repeats: at least ``min_repeats``, more until ``min_seconds`` is spent.

    The minimum, not the mean: other work on the machine only ever adds time to a run, so the fastest
    repeat is the best estimate of what the computation itself costs.
    """
    times = []
    spent = 0.0
    while len(times) < max_repeats and (len(times) < min_repeats or spent < min_seconds):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        dt = time.perf_counter() - t0
        times.append(dt * 1000.0)
        spent += dt
    return min(times), len(times)


def sweep(bundle: ModelBundle, lengths: list[int], *, should_stop: Callable[[], bool] | None = None,
          on_point: Callable[[CostPoint], None] | None = None,
          on_progress: Callable[[float, CostPoint | None], None] | None = None,
          seed: int = 0, warmup: bool = True, cached_repeats: tuple[int, int] = (3, 7),
          naive_repeats: tuple[int, int] = (1, 5)) -> SweepResult:
    """Time a cached decode step and a naive step at each length, shortest first.

    The cache grows by chunked prefill from one length to the next (so the whole sweep does about one
    prefill of the longest length in total); at length L it holds L − 1 tokens, one token is fed and
    timed, and ``crop(-1)`` removes it again before the next repeat. ``should_stop()`` is checked before
    every length: the points measured so far are kept and ``stopped_early`` is set.
    ``*_repeats`` = (at least, at most) timed runs per point; more are done while they are cheap.
    """
    lengths = sorted({int(L) for L in lengths})
    if not lengths or lengths[0] < 1:
        raise ValueError("Lengths must be positive.")
    limit = bundle.max_positions
    if lengths[-1] > limit:
        raise ValueError(f"{bundle.name} reads at most {limit} positions; asked for {lengths[-1]}.")
    model, device = bundle.model, bundle.device
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, bundle.vocab_size, (1, lengths[-1]), generator=gen).to(device)
    result = SweepResult(model=bundle.name, device=str(device), dtype=str(bundle.dtype).replace("torch.", ""),
                         lengths=lengths)
    total_work = float(sum(lengths)) or 1.0
    done_work = 0.0
    start = time.perf_counter()
    with torch.inference_mode():
        if warmup:  # first calls allocate and pick kernels; keep that out of the numbers
            n = min(16, lengths[-1])
            _forward(model, ids[:, :n])
            warm = DynamicCache(config=bundle.config)
            _forward(model, ids[:, :n], warm)
            _forward(model, ids[:, n - 1:n], warm)
        cache = DynamicCache(config=bundle.config)
        for L in lengths:
            if should_stop is not None and should_stop():
                result.stopped_early = True
                break
            have = cache.get_seq_length()
            if have < L - 1:  # extend the cache to L − 1 tokens (chunked prefill)
                t0 = time.perf_counter()
                _forward(model, ids[:, have:L - 1], cache)
                _sync(device)
                result.prefill_ms += (time.perf_counter() - t0) * 1000.0
            new_token = ids[:, L - 1:L]

            def cached_step():
                _forward(model, new_token, cache)
                cache.crop(-1)  # back to L − 1 tokens for the next repeat

            if cache.get_seq_length() != L - 1:
                raise RuntimeError(f"cache holds {cache.get_seq_length()} tokens, expected {L - 1}")
            cached_ms, cached_n = _time_repeats(cached_step, device, *cached_repeats, 0.1)
            naive_ms, naive_n = _time_repeats(lambda: _forward(model, ids[:, :L]), device, *naive_repeats, 0.3)
            point = CostPoint(L, cached_ms, naive_ms, cached_n, naive_n)
            result.points.append(point)
            done_work += L
            if on_point is not None:
                on_point(point)
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


def flops_per_ms(dims: ModelDims, points: list[CostPoint], cached: bool) -> float:
    """The throughput that maps the FLOP count onto the measured times best (least squares through 0)."""
    F = np.array([flops_step(dims, p.length, cached) for p in points], dtype=float)
    t = np.array([p.cached_ms if cached else p.naive_ms for p in points], dtype=float)
    denom = float((t * t).sum())
    return float((F * t).sum() / denom) if denom > 0 else float("nan")


# ---------------------------------------------------------------- the machine
def measure_bandwidth(device: torch.device | str = "cpu", megabytes: int = 128, repeats: int = 5) -> float:
    """Copy bandwidth in bytes/s (bytes read + bytes written), best of a few copies of a large buffer."""
    device = torch.device(device)
    n = megabytes * 2**20 // 4
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)  # touch the pages once
    best = math.inf
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        dst.copy_(src)
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    del src, dst
    return 2 * n * 4 / best


def measure_matmul_flops(device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32,
                         n: int = 1024, repeats: int = 3) -> float:
    """Dense matmul throughput in FLOP/s (best of a few n×n products): the compute roof."""
    device = torch.device(device)
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    a @ b
    best = math.inf
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best


def load_average() -> float | None:
    """The 1-minute load average (runnable processes), where the OS reports one."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def machine_info(device: torch.device | str = "cpu") -> dict:
    device = torch.device(device)
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"platform": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
            "cpu": cpu, "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "device": str(device), "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
            "load_avg_1min": load_average()}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


__all__ = [
    "CostPoint", "DEFAULT_SWEEP_LENGTH", "Fit", "MAX_SWEEP_LENGTH", "ModelDims", "SweepResult",
    "arithmetic_intensity", "count_table", "cumulative_ms", "decode_bytes", "dot_products_step",
    "dot_products_total", "fit_poly", "fits", "flops_per_ms", "flops_step", "flops_total", "load_average", "machine_info",
    "measure_bandwidth", "measure_matmul_flops", "positions_total", "sample_lengths", "sweep",
]
