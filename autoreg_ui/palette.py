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
TEXT = "#0d1117"  # the theme's text colour (.streamlit/config.toml)


# Probability of a picked token, pale (unlikely) to deep (confident): the light half of ColorBrewer's
# YlGnBu, whose lightness falls steadily, so readers with any colour vision see the order (a red-green
# scale hides it from about one man in twelve). Dark text stays readable on every stop.
PROB_RAMP = ("#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4")
PROB_STEPS = 20  # the token strip colours a chip with one of 21 shades (every 5 points): a CSS class, not a style


def prob_shade(prob: float) -> int:
    """Which of the strip's shades (0..PROB_STEPS) a probability gets: the nearest 5-point step."""
    return round(max(0.0, min(1.0, prob)) * PROB_STEPS)


UNLIKELY = 0.10  # below this a picked token also gets a dotted underline: a cue that is not colour


def prob_color(prob: float) -> str:
    """Token chip background for a probability in [0, 1], interpolated along ``PROB_RAMP``."""
    x = max(0.0, min(1.0, prob)) * (len(PROB_RAMP) - 1)
    i = min(int(x), len(PROB_RAMP) - 2)
    lo, hi = PROB_RAMP[i], PROB_RAMP[i + 1]
    mix = [round(int(lo[k:k + 2], 16) + (x - i) * (int(hi[k:k + 2], 16) - int(lo[k:k + 2], 16))) for k in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def luminance(hex_color: str) -> float:
    """WCAG relative luminance of ``#rrggbb`` (what contrast ratios are computed from)."""
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(int(hex_color[i:i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (4.5 is the AA floor for body text)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def alpha(hex_color: str, a: float) -> str:
    """``#rrggbb`` with an opacity, as CSS/plotly ``rgba(...)``."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{max(0.0, min(1.0, a)):.3f})"
