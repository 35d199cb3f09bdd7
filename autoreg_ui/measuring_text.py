"""What the app says about a measurement: waiting in line, stopped, cut short, a busy machine, failed.

Pure functions of numbers (no Streamlit, no controller): ``measuring`` decides when each is said.
"""
from __future__ import annotations


def queued(label: object, ago_s: float | None, ahead: int) -> str:
    ago = f", started {ago_s:.0f} s ago" if ago_s is not None else ""
    return (f"Another measurement is running on this server ({label}{ago}); yours is queued"
            + (f" behind {ahead} other{'s' if ahead != 1 else ''}" if ahead else "")
            + " and starts as soon as it ends. The model is shared by everyone on this server.")


def waited_too_long(limit_s: float, label: object) -> str:
    return f"Waited {limit_s:.0f} s for the measurement in progress ({label}); please try again in a minute."


STOPPED = "Stopped before the end: what was measured is shown; run again for the rest."


def budget_ran_out(budget_s: float) -> str:
    return f"The {budget_s:.0f} s time budget ran out before the end: only part was measured."


def busy_machine(load: float, cores: int) -> str:
    return (f"The machine was busy during this measurement (load average {load:.1f} on {cores} cores): other "
            "programs took CPU time, so these times are inflated and noisy. Measure again when it is quieter "
            "for clean numbers.")


def failed(exc: BaseException) -> str:
    return f"The measurement failed: {type(exc).__name__}: {exc}"


def roofs_caption(age_s: float, load: float | None, cores: int | None) -> str:
    """When the roofs shown were measured, and whether the machine was busy then."""
    when = "just now" if age_s < 5 else (f"{age_s:.0f} s ago" if age_s < 120 else f"{age_s / 60:.0f} min ago")
    busy = (f" The machine was busy then (load {load:.1f} on {cores} cores): they are re-measured within a minute."
            if load is not None and cores and load > cores else "")
    return f"Bandwidth and matmul peak measured on this server {when}.{busy}"
