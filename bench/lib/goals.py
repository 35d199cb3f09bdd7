"""The goals the benches read their figures against, in one place, with the arithmetic of each verdict.

Ratios are against this machine's own references measured in the same run (a bare page's click, a solo decode
step), so a goal holds on a slow machine as on a fast one.
"""
from __future__ import annotations

import statistics

from bench.lib.stats import rounded

# One click against the bare page (bench/bare_page.py), as ratios: (latency p50, server CPU); None = no goal.
CLICK_GOALS: dict[str, tuple[float, float | None]] = {
    "step_next_token": (1.5, None), "step_next_token_long_text": (1.5, None), "attention_next_token": (2.0, None),
    "lab_slider": (2.0, None), "lab_draw_again": (2.0, None)}

# Server CPU per Next token click beyond the model's pass ≤ 1.5× the step-shaped floor (bench/bare_step_shape.py:
# the step page's elements drawn plainly, no model, no app code). The goal used to be against the bare page; drawing
# the step page's elements alone already costs about 1.8× that, so the floor with the same elements replaced it.
STEP_SHAPE_CPU_GOAL_RATIO = 1.5
STEP_SHAPE_CPU_GOALS = {"step_next_token": STEP_SHAPE_CPU_GOAL_RATIO,
                        "step_next_token_long_text": STEP_SHAPE_CPU_GOAL_RATIO}
P95_GOAL_RATIO = 8.0  # 30 students: Next token p95 ≤ 8× the solo decode step

# the soak: 30 students who reset every 40 tokens for 20 minutes, memory slope after the warm-up within ±2 MiB/min
SOAK_STUDENTS, SOAK_MINUTES, SOAK_RESET_EVERY, SOAK_SLOPE_MIB_PER_MIN = 30, 20, 40, 2.0

# a lecture: 120 followers across 2 replicas + PostgreSQL, every step to every follower, follow delay p95 ≤ 0.5 s
LECTURE_FOLLOWERS, LECTURE_P95_S = 120, 0.5
# a lecture hall: 1,000 followers of one class on one server, p95 ≤ 0.5 s, server CPU ≤ 0.5 ms per follower update
HALL_FOLLOWERS, HALL_P95_S, HALL_CPU_MS = 1000, 0.5, 0.5

TAB_MEMORY_MIB = 30  # what one tab holds at 2,048 tokens, KV cache excluded


def cpu_comparison(app_ms: list[float], bare_ms: list[float], goal: float | None = STEP_SHAPE_CPU_GOAL_RATIO) -> dict:
    """Median server CPU per click beyond the model, the app's Next token against a floor page's, and the verdict
    (``goal`` None: a floor read for information, with no verdict)."""
    app = statistics.median(app_ms) if app_ms else None
    bare = statistics.median(bare_ms) if bare_ms else None
    ratio = app / bare if app is not None and bare else None
    out = {"step_next_token_cpu_ms": rounded(app), "bare_next_token_cpu_ms": rounded(bare),
           "clicks": [len(app_ms), len(bare_ms)], "ratio": rounded(ratio, 2)}
    if goal is not None:
        out.update(goal_ratio=goal, meets_goal=None if ratio is None else ratio <= goal)
    return out


def p95_goal(p50_ms: float | None, p95_ms: float | None, solo_ms: float | None, goal: float = P95_GOAL_RATIO) -> dict:
    """The class's Next token p50/p95 against this machine's solo decode step, and the verdict."""
    ratio = p95_ms / solo_ms if p95_ms is not None and solo_ms else None
    return {"solo_decode_step_ms": rounded(solo_ms), "next_token_p50_ms": rounded(p50_ms),
            "next_token_p95_ms": rounded(p95_ms), "p95_over_solo": rounded(ratio, 2), "goal_ratio": goal,
            "meets_goal": None if ratio is None else ratio <= goal}


def slope_within_goal(slope: float | None, goal: float = SOAK_SLOPE_MIB_PER_MIN) -> bool | None:
    """A memory slope within ±``goal`` MiB/min (None: no slope could be read)."""
    return None if slope is None else abs(slope) <= goal
