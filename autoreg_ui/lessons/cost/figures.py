"""Figures for the cost page: naive vs KV-cached step times, totals, speedup, counts, the roofline."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments.kv_cost import CostPoint, Fit
from autoreg_ui import palette
from autoreg_ui.format import human_bytes

NAIVE_COLOR = palette.HIGHLIGHT
CACHED_COLOR = palette.ACCENT
FIT_DASH = "dash"
MIB = 2**20


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    fig.update_layout(title=title, height=height, margin=dict(l=60, r=60, t=60, b=50),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
                      hovermode="x unified")
    return fig


def _lengths(points: list[CostPoint]) -> list[int]:
    return [p.length for p in points]


def step_time_figure(points: list[CostPoint], fits: dict[str, Fit | None] | None = None,
                     planned_max: int | None = None) -> go.Figure:
    """Measured time of one step at each length: a naive full recompute vs a cached decode step."""
    L = _lengths(points)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=L, y=[p.naive_ms for p in points], mode="lines+markers", name="naive (recompute all)",
                             line=dict(color=NAIVE_COLOR),
                             hovertemplate="naive %{y:.1f} ms<extra></extra>"))
    fig.add_trace(go.Scatter(x=L, y=[p.cached_ms for p in points], mode="lines+markers", name="KV cache (one token)",
                             line=dict(color=CACHED_COLOR),
                             hovertemplate="cached %{y:.1f} ms<extra></extra>"))
    if fits and L:
        xs = np.linspace(min(L), max(L), 100)
        for kind, color, label in (("naive", NAIVE_COLOR, "fit a + bL + cL²"), ("cached", CACHED_COLOR, "fit a + bL")):
            fit = fits.get(kind)
            if fit is not None:
                fig.add_trace(go.Scatter(x=xs, y=fit(xs), mode="lines", name=f"{kind}: {label}",
                                         line=dict(color=color, dash=FIT_DASH, width=1), hoverinfo="skip"))
    _layout(fig, "Time of one step at sequence length L")
    fig.update_xaxes(title="sequence length L (tokens)", range=[0, (planned_max or max(L, default=1)) * 1.03])
    fig.update_yaxes(title="ms per step", rangemode="tozero")
    return fig


def cumulative_figure(cum: dict[str, np.ndarray]) -> go.Figure:
    """Total time to generate T tokens: the area under each per-step curve."""
    T = cum["T"]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=T, y=cum["naive"] / 1000.0, mode="lines", name="naive",
                             line=dict(color=NAIVE_COLOR), hovertemplate="naive %{y:.2f} s<extra></extra>"))
    fig.add_trace(go.Scatter(x=T, y=cum["cached"] / 1000.0, mode="lines", name="KV cache",
                             line=dict(color=CACHED_COLOR), hovertemplate="cached %{y:.2f} s<extra></extra>"))
    _layout(fig, "Total time for T tokens")
    fig.update_xaxes(title="tokens generated T")
    fig.update_yaxes(title="seconds", rangemode="tozero")
    return fig


def speedup_figure(points: list[CostPoint]) -> go.Figure:
    """naive ms / cached ms at each measured length; 1 means no gain."""
    L = _lengths(points)
    fig = go.Figure(go.Scatter(x=L, y=[p.speedup for p in points], mode="lines+markers", name="speedup",
                               line=dict(color=palette.GOOD), hovertemplate="L=%{x}: %{y:.1f}×<extra></extra>"))
    fig.add_hline(y=1.0, line=dict(color=palette.MUTED, dash="dot"), annotation_text="no gain",
                  annotation_position="bottom right")
    _layout(fig, "Speedup: naive ÷ cached step time")
    fig.update_layout(showlegend=False)
    fig.update_xaxes(title="sequence length L (tokens)")
    fig.update_yaxes(title="× faster", rangemode="tozero")
    return fig


def theory_figure(spec: ModelSpec, max_length: int, points: list[CostPoint] | None = None,
                  fits: dict[str, Fit | None] | None = None,
                  scale: dict[str, float] | None = None) -> go.Figure:
    """FLOPs per step from the model's shape (left axis, lines) with measured ms (right axis, markers).

    Two panels, naive and cached. ``scale[kind]`` (FLOPs per ms) lines the right axis up with the left
    one, so a measurement that follows the count sits on the line.
    """
    fig = make_subplots(rows=1, cols=2, specs=[[{"secondary_y": True}, {"secondary_y": True}]],
                        subplot_titles=["naive: recompute all L positions", "KV cache: one new position"],
                        horizontal_spacing=0.12)
    xs = np.unique(np.linspace(1, max(1, max_length), 200).round().astype(int))
    points = points or []
    for col, kind, color in ((1, "naive", NAIVE_COLOR), (2, "cached", CACHED_COLOR)):
        cached = kind == "cached"
        F = np.array([spec.flops_step(int(L), cached) for L in xs], dtype=float)
        fig.add_trace(go.Scatter(x=xs, y=F / 1e9, mode="lines", name=f"{kind}: GFLOPs (count)",
                                 line=dict(color=color, width=3), opacity=0.45,
                                 hovertemplate="%{y:.3f} GFLOPs<extra></extra>"), row=1, col=col, secondary_y=False)
        top = float(F.max()) / 1e9 * 1.08
        fig.update_yaxes(title_text="GFLOPs per step (line)" if col == 1 else None, range=[0, top],
                         row=1, col=col, secondary_y=False)
        if points:
            L = _lengths(points)
            ms = [p.cached_ms if cached else p.naive_ms for p in points]
            fig.add_trace(go.Scatter(x=L, y=ms, mode="markers", name=f"{kind}: measured ms",
                                     marker=dict(color=color, size=8, symbol="circle-open", line=dict(width=2)),
                                     hovertemplate="%{y:.1f} ms measured<extra></extra>"),
                          row=1, col=col, secondary_y=True)
            fit = (fits or {}).get(kind)
            if fit is not None:
                fx = np.linspace(min(L), max(L), 100)
                fig.add_trace(go.Scatter(x=fx, y=fit(fx), mode="lines", name=f"{kind}: fit to ms",
                                         line=dict(color=color, dash=FIT_DASH, width=1), hoverinfo="skip"),
                              row=1, col=col, secondary_y=True)
            k = (scale or {}).get(kind)
            right = dict(title_text="measured ms (markers)" if col == 2 else None, row=1, col=col, secondary_y=True)
            if k and np.isfinite(k) and k > 0:
                right["range"] = [0, top * 1e9 / k]
            else:
                right["rangemode"] = "tozero"
            fig.update_yaxes(**right)
        fig.update_xaxes(title_text="sequence length L", row=1, col=col)
    _layout(fig, "Count vs measurement, per step", height=440)
    fig.update_layout(margin=dict(l=60, r=70, t=70, b=50), hovermode="closest",
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="center", x=0.5))
    return fig


def roofline_figure(bandwidth: float, peak_flops: float, marks: list[dict]) -> go.Figure:
    """Attainable FLOP/s = min(peak, intensity × bandwidth), log–log, with measured operating points.

    ``marks``: dicts with ``name``, ``intensity`` (FLOPs/byte) and ``achieved`` (FLOP/s measured).
    """
    lo = min([0.05] + [m["intensity"] / 3 for m in marks])
    hi = max([1000.0] + [m["intensity"] * 3 for m in marks])
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    roof = np.minimum(peak_flops, x * bandwidth)
    fig = go.Figure(go.Scatter(x=x, y=roof / 1e9, mode="lines", name="roof: min(peak, intensity × bandwidth)",
                               line=dict(color=palette.INK), hovertemplate="%{y:.1f} GFLOP/s<extra></extra>"))
    ridge = peak_flops / bandwidth
    fig.add_vline(x=ridge, line=dict(color=palette.MUTED, dash="dot"))
    # annotations on log axes take log10 coordinates
    fig.add_annotation(x=np.log10(ridge), y=np.log10(peak_flops / 1e9), text=f"ridge {ridge:.1f} FLOP/byte",
                       showarrow=False, yshift=14, xanchor="left", font=dict(color=palette.RAW))
    colors = [CACHED_COLOR, NAIVE_COLOR, palette.GOOD, palette.CUMULATIVE]
    for i, m in enumerate(marks):
        fig.add_trace(go.Scatter(x=[m["intensity"]], y=[m["achieved"] / 1e9], mode="markers+text",
                                 name=m["name"], text=[m["name"]], textposition="bottom center",
                                 marker=dict(size=12, color=colors[i % len(colors)]),
                                 hovertemplate="%{x:.2f} FLOP/byte, %{y:.2f} GFLOP/s<extra></extra>"))
    fig.update_layout(title="Roofline of this machine: where a decode step sits", height=380,
                      margin=dict(l=60, r=30, t=60, b=50), showlegend=False)
    ys = [m["achieved"] / 1e9 for m in marks] + [float(roof.min()) / 1e9, peak_flops / 1e9]
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOPs per byte read)", dtick=1,
                     range=[np.log10(lo), np.log10(hi)])
    fig.update_yaxes(type="log", title="GFLOP/s", dtick=1,
                     range=[np.log10(max(min(ys), 1e-6)) - 0.3, np.log10(max(ys)) + 0.4])
    return fig


def bytes_figure(weights: int, cache: int, title: str) -> go.Figure:
    """What one decode step reads: every weight once, plus the whole KV cache (in MiB)."""
    fig = go.Figure()
    for name, value, color in (("weights", weights, palette.INK), ("KV cache", cache, CACHED_COLOR)):
        fig.add_trace(go.Bar(y=["bytes read"], x=[value / MIB], name=name, orientation="h", marker_color=color,
                             hovertemplate=f"{name}: {human_bytes(value)}<extra></extra>"))
    fig.update_layout(barmode="stack", title=title, height=180, margin=dict(l=80, r=20, t=50, b=40),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    fig.update_xaxes(title="MiB")
    return fig
