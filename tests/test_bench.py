"""The bench's pieces run on the tiny model and report what they claim (no speed thresholds here)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench import run

ROOT = Path(__file__).resolve().parents[1]


def test_next_token_report_on_tiny(tiny):
    out = run.next_token(tiny, 4)
    for key in ("generate_per_token_ms", "session_step_per_token_ms", "capture_attention_per_token_ms"):
        assert out[key] > 0
    assert out["ratio_session_vs_generate"] == pytest.approx(
        out["session_step_per_token_ms"] / out["generate_per_token_ms"], rel=0.05)
    assert 1 <= out["tokens"] <= 4


def test_naive_vs_cached_report_on_tiny(tiny):
    out = run.naive_vs_cached(tiny, [4, 16])
    assert [p["length"] for p in out["points"]] == [4, 16]
    for p in out["points"]:
        assert p["speedup"] == pytest.approx(p["naive_ms"] / p["cached_ms"], rel=0.02, abs=0.02)


def test_help_runs_without_loading_anything():
    proc = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "--lengths" in proc.stdout
