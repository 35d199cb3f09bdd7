"""The app's colours, in one place: every chart and token strip takes its colours from here."""
from __future__ import annotations

ACCENT = "#1f6feb"  # blue: what was kept, the KV cache path, decode rows
HIGHLIGHT = "#e8590c"  # orange: the chosen token, the naive path, the query
MUTED = "#98a2b3"  # grey: prompt tokens, prefill rows
FADED = "#d0d7de"  # light grey: removed tokens, pruned beams
RAW = "#6e7781"  # the model's raw softmax before any filter
SOFT_ACCENT = "#9db4d6"  # a lighter blue behind ACCENT (before vs after the filters)
GOOD = "#1a7f37"  # green: greedy's path, a confident pick
CUMULATIVE = "#8250df"  # purple: cumulative probability, forced tokens
INK = "#495057"  # dark grey: weights, text-like marks
PROMPT_CHIP = "#eceff3"  # background of a prompt token chip
NOT_VISIBLE = "#f2f2f2"  # background of a key a query cannot see


def prob_color(prob: float) -> str:
    """Token chip background: red for unlikely picks through yellow to green for confident ones."""
    hue = int(120 * max(0.0, min(1.0, prob)))
    return f"hsl({hue}, 75%, 82%)"


def alpha(hex_color: str, a: float) -> str:
    """``#rrggbb`` with an opacity, as CSS/plotly ``rgba(...)``."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{max(0.0, min(1.0, a)):.3f})"
