"""Figures for the KV cache: its growth over a session, its tensors, the memory calculator, prefill vs decode."""
from __future__ import annotations

import html

import plotly.graph_objects as go

from autoreg_core.cache import CachePoint, LayerCacheShape
from autoreg_core.spec import ModelSpec
from autoreg_ui import palette
from autoreg_ui.format import human_bytes

PREFILL_COLOR = palette.MUTED
DECODE_COLOR = palette.ACCENT
CACHE_COLOR = palette.HIGHLIGHT
WEIGHT_COLOR = palette.INK
GIB = 1024 ** 3


def cache_growth_figure(points: list[CachePoint], bytes_per_position: float) -> go.Figure:
    """Cache length (left axis) and measured bytes (right axis) after the prefill and each step.

    The line starts at an empty cache, jumps by the whole prompt at the prefill, then climbs one
    position per decode step. Both axes share one scale (bytes = positions × bytes per position),
    so the measured byte markers sit exactly on the length line when the formula holds.
    Built in one constructor call from dicts: it is redrawn on every click.
    """
    if not points:
        return go.Figure(layout=dict(title=dict(text="No forward pass yet: the cache is empty"), height=300))
    xs = [0] + [p.step for p in points]
    lengths = [0] + [p.positions for p in points]
    traces = [
        dict(type="scatter", x=xs, y=lengths, mode="lines", line=dict(color=DECODE_COLOR, width=2, shape="vh"),
             name="cache length", hovertemplate="after step %{x}: %{y} positions<extra></extra>"),
        dict(type="scatter", x=[p.step for p in points], y=[p.measured_bytes for p in points], yaxis="y2",
             mode="markers", name="measured bytes", marker=dict(color=CACHE_COLOR, size=7, symbol="circle-open"),
             customdata=[[p.phase, human_bytes(p.measured_bytes), p.formula_bytes, p.positions] for p in points],
             hovertemplate=("%{customdata[0]} %{x}: %{customdata[3]} positions<br>measured %{y:,} B "
                            "(%{customdata[1]})<br>formula %{customdata[2]:,} B<extra></extra>")),
    ]
    top = max(lengths) * 1.08 + 1
    first = points[0]
    layout = dict(
        title=dict(text="KV cache: prefill jump, then +1 row per step"), height=340,
        margin=dict(l=50, r=60, t=50, b=40), legend=dict(orientation="h", y=-0.2),
        xaxis=dict(title=dict(text="decode step (0 = prefill)"), rangemode="tozero", tickformat="d",
                   dtick=max(1, -(-points[-1].step // 10))),
        yaxis=dict(title=dict(text="positions in the cache"), range=[0, top]),
        yaxis2=dict(title=dict(text="bytes (measured)"), overlaying="y", side="right",
                    range=[0, top * bytes_per_position], showgrid=False),
        annotations=[dict(x=0, y=first.positions, text=f"prefill: +{first.positions} at once",
                          showarrow=True, arrowhead=2, ax=50, ay=-10)])
    return go.Figure(data=traces, layout=layout)


FORMULA_LATEX = (r"\text{bytes} = 2 \times \text{layers} \times \text{batch} \times \text{kv\_heads} \times "
                 r"\text{head\_dim} \times \text{positions} \times \text{bytes per element}")


def formula_latex(spec: ModelSpec, positions: int, batch: int = 1) -> str:
    """The cache formula with this model's numbers filled in, and its result from ``spec``."""
    factors = [2, spec.n_layers, batch, spec.n_kv_heads, spec.head_dim, positions]
    total = spec.cache_bytes(positions, batch)
    text = r" \times ".join(f"{f:,}" for f in factors) + rf" \times {spec.cache_bytes_per_element:g} = {total:,}"
    return text.replace(",", "{,}") + r"\ \text{bytes}"


def shapes_table(shapes: list[LayerCacheShape]) -> list[dict]:
    """One row per layer: the K and V tensor shapes, their dtype and measured bytes."""
    return [{"layer": s.layer, "K shape": str(list(s.keys)), "V shape": str(list(s.values)), "dtype": s.dtype,
             "bytes (K+V)": s.nbytes} for s in shapes]


def memory_figure(spec: ModelSpec, max_len: int | None = None) -> go.Figure:
    """Cache bytes against sequence length (a straight line) next to the fixed weight bytes.

    ``spec`` carries the chosen sequence length, batch and both precisions (weights, cache).
    """
    seq_len, batch = spec.seq_len, spec.batch
    max_len = max(int(max_len or 0), seq_len * 2, 16)
    xs = sorted({0, *[round(max_len * i / 64) for i in range(65)], seq_len})
    here = spec.cache_bytes(seq_len, batch)
    traces = [
        dict(type="scatter", x=xs, y=[spec.cache_bytes(x, batch) / GIB for x in xs], mode="lines", name="KV cache",
             line=dict(color=CACHE_COLOR, width=3), hovertemplate="%{x:,} tokens: %{y:.3f} GiB of cache<extra></extra>"),
        dict(type="scatter", x=[xs[0], xs[-1]], y=[spec.weight_bytes / GIB] * 2, mode="lines", name="weights",
             line=dict(color=WEIGHT_COLOR, dash="dash"), hovertemplate="weights: %{y:.3f} GiB<extra></extra>"),
        dict(type="scatter", x=[seq_len], y=[here / GIB], mode="markers", name="chosen length",
             marker=dict(color=CACHE_COLOR, size=12),
             hovertemplate=f"{seq_len:,} tokens × batch {batch}: {human_bytes(here)}<extra></extra>"),
    ]
    layout = dict(title=dict(text=f"{html.escape(spec.name)}: cache grows linearly with tokens (batch {batch})"),
                  height=340, margin=dict(l=50, r=10, t=50, b=40),
                  xaxis=dict(title=dict(text="sequence length (tokens)")),
                  yaxis=dict(title=dict(text="GiB"), rangemode="tozero"), legend=dict(orientation="h", y=-0.2))
    return go.Figure(data=traces, layout=layout)


def phase_times_figure(prefill_ms_per_token: float, decode_ms: float, n_prompt: int) -> go.Figure:
    """Measured: milliseconds per token inside the prefill vs for one decode step."""
    bar = dict(type="bar", x=[f"prefill ({n_prompt} tokens), per token", "decode step (1 token)"],
               y=[prefill_ms_per_token, decode_ms], marker=dict(color=[PREFILL_COLOR, DECODE_COLOR]),
               text=[f"{prefill_ms_per_token:.2f} ms", f"{decode_ms:.2f} ms"], textposition="outside",
               hovertemplate="%{x}: %{y:.3f} ms<extra></extra>")
    layout = dict(title=dict(text="Time per token, measured in this session"), height=320,
                  margin=dict(l=50, r=10, t=50, b=40), yaxis=dict(title=dict(text="ms per token"), rangemode="tozero"))
    return go.Figure(data=[bar], layout=layout)
