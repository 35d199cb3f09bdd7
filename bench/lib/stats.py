"""The few statistics the benches report: a nearest-rank percentile, a latency summary, and a memory trend (the
least-squares slope of samples after a warm-up, with its standard error)."""
from __future__ import annotations

import statistics


def percentile(values: list[float], q: float) -> float | None:
    """The value at rank ``q`` % of the sorted values (nearest rank, no interpolation); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def rounded(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def latency(values: list[float]) -> dict:
    """Seconds in, milliseconds out: count, p50, p95 and max."""
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "p50_ms": rounded(percentile(ms, 50)), "p95_ms": rounded(percentile(ms, 95)),
            "max_ms": rounded(max(ms) if ms else None)}


def _after(samples: list[tuple[float, float]], warmup_s: float) -> list[tuple[float, float]]:
    return [(t, m) for t, m in samples if t >= warmup_s]


def slope_after_warmup(samples: list[tuple[float, float]], warmup_s: float) -> float | None:
    """The least-squares slope (MiB per minute) of the (seconds, MiB) samples taken at or after ``warmup_s``;
    None with fewer than three such samples (or all at one instant)."""
    after = _after(samples, warmup_s)
    if len(after) < 3:
        return None
    t_mean = statistics.fmean(t for t, _ in after)
    m_mean = statistics.fmean(m for _, m in after)
    var = sum((t - t_mean) ** 2 for t, _ in after)
    if not var:
        return None
    return sum((t - t_mean) * (m - m_mean) for t, m in after) / var * 60


def slope_error(samples: list[tuple[float, float]], warmup_s: float) -> float | None:
    """The slope's standard error (MiB per minute): memory saw-tooths by tens of MiB as the students' texts grow
    and reset, so a slope is read with its uncertainty. None with fewer than three samples after the warm-up."""
    slope = slope_after_warmup(samples, warmup_s)
    after = _after(samples, warmup_s)
    if slope is None or len(after) < 3:
        return None
    t_mean = statistics.fmean(t for t, _ in after)
    m_mean = statistics.fmean(m for _, m in after)
    var = sum((t - t_mean) ** 2 for t, _ in after)
    residual = sum((m - m_mean - slope / 60 * (t - t_mean)) ** 2 for t, m in after)
    return (residual / (len(after) - 2) / var) ** 0.5 * 60
