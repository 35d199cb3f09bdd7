"""Figures for "Inside generation": teacher forcing, the logit lens, prefill vs decode, the sliding window."""
from __future__ import annotations

import math

import plotly.graph_objects as go

from autoreg_core.engine.tokens import single_token_view
from autoreg_core.experiments.logit_lens import LensReading
from autoreg_core.experiments.prefill_decode import PrefillPoint
from autoreg_ui import palette
from autoreg_ui.format import human_bytes
from autoreg_ui.labels import escaped, short_label

MIB = 1024 ** 2


def _layout(fig: go.Figure, title: str, height: int = 340) -> go.Figure:
    fig.update_layout(title=title, height=height, margin=dict(l=60, r=20, t=50, b=45),
                      legend=dict(orientation="h", y=-0.22))
    return fig


def teacher_figure(steps: list[int], stepped: list[float], one_pass: list[float], forced: list[bool]) -> go.Figure:
    """Each step's log-prob as recorded while generating (bars) and as one pass over the text reads it (marks)."""
    fig = go.Figure()
    fig.add_bar(x=steps, y=stepped, name="step by step (the session's records)",
                marker_color=[palette.CUMULATIVE if f else palette.SOFT_ACCENT for f in forced],
                hovertemplate="step %{x}<br>%{y:.5f} nats<extra>step by step</extra>")
    fig.add_scatter(x=steps, y=one_pass, mode="markers", name="one pass over the whole text (teacher forcing)",
                    marker=dict(color=palette.HIGHLIGHT, symbol="x", size=8),
                    hovertemplate="step %{x}<br>%{y:.5f} nats<extra>one pass</extra>")
    fig.update_xaxes(title="step (forced steps in purple)", tickformat="d")
    fig.update_yaxes(title="log p(token | text before it), nats")
    return _layout(fig, "The same log-probabilities, two ways")


LENS_CELL_FONT_PX = 11  # the logit lens's cell labels: readable, and a 10-character label fits its cell


def lens_figure(tokenizer, reading: LensReading) -> go.Figure:
    """Layers (rows) × the top guesses (columns): each cell a token, coloured by its probability."""
    names = ["embedding"] + [f"layer {i}" for i in range(1, reading.depth)]
    labels = [[single_token_view(tokenizer, int(t)).label for t in row] for row in reading.top_ids.tolist()]
    probs = reading.top_probs.tolist()
    fig = go.Figure(go.Heatmap(
        z=probs, x=[f"#{i}" for i in range(1, len(probs[0]) + 1)], y=names,
        text=[[short_label(label, 10) for label in row] for row in labels], texttemplate="%{text}",
        textfont=dict(size=LENS_CELL_FONT_PX),  # fixed: plotly shrinks a cell's text to fit it (about 7 px here)
        customdata=[escaped(row) for row in labels], zmin=0, zmax=1,
        colorscale=[[0, palette.alpha(palette.ACCENT, 0.04)], [1, palette.ACCENT]],
        colorbar=dict(title="p"), hovertemplate="%{y}, guess %{x}: %{customdata}<br>p = %{z:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title="read after")
    fig.update_xaxes(title="most likely next tokens at that depth", side="top")
    return _layout(fig, "", height=max(320, 22 * reading.depth + 80))


def lens_target_figure(tokenizer, reading: LensReading) -> go.Figure:
    """The eventual token's probability (left) and rank among the whole vocabulary (right, log) at every depth.

    The probability often stays near 0 until the last layers; the rank shows it climbing long before.
    """
    label = escaped([single_token_view(tokenizer, reading.target_id).label])[0]
    depth = list(range(reading.depth))
    fig = go.Figure()
    fig.add_scatter(x=depth, y=reading.target_probs, mode="lines+markers", name=f"probability of “{label}”",
                    line=dict(color=palette.HIGHLIGHT),
                    hovertemplate="after layer %{x}<br>p = %{y:.4f}<extra></extra>")
    fig.add_scatter(x=depth, y=reading.target_ranks, yaxis="y2", mode="lines+markers", name="its rank (right axis)",
                    line=dict(color=palette.MUTED, dash="dot"),
                    hovertemplate="after layer %{x}<br>rank %{y:,}<extra></extra>")
    if reading.settles_at is not None:
        fig.add_vline(x=reading.settles_at, line=dict(color=palette.GOOD, dash="dot"),
                      annotation_text="top guess from here on", annotation_position="top left")
    fig.update_layout(xaxis=dict(title="layer (0 = the embedding)", tickformat="d"),
                      yaxis=dict(title="probability", range=[0, 1.05]),
                      yaxis2=dict(title="rank (1 = top guess)", type="log", overlaying="y", side="right",
                                  range=[math.log10(max(reading.target_ranks)) + 0.3, -0.1],  # rank 1 on top
                                  dtick=1, tickformat=",d", showgrid=False))
    return _layout(fig, f"How sure each layer is of “{label}”", height=320)


def sweep_figure(points: list[PrefillPoint]) -> go.Figure:
    """Milliseconds per token: inside a prefill of L prompt tokens, and a decode step at the same length."""
    lengths = [p.length for p in points]
    ratios = [p.decode_over_prefill for p in points]
    fig = go.Figure()
    fig.add_scatter(x=lengths, y=[p.decode_ms for p in points], mode="lines+markers", customdata=ratios,
                    name="decode: one generated token", line=dict(color=palette.ACCENT),
                    hovertemplate="L = %{x}<br>%{y:.1f} ms per token<br>%{customdata:.1f}× a prompt token"
                                  "<extra>decode</extra>")
    fig.add_scatter(x=lengths, y=[p.prefill_ms_per_token for p in points], mode="lines+markers",
                    name="prefill: one prompt token (pass time ÷ L)", line=dict(color=palette.MUTED),
                    hovertemplate="L = %{x}<br>%{y:.2f} ms per token<extra>prefill</extra>")
    fig.update_xaxes(title="prompt length L (tokens)", type="log")
    fig.update_yaxes(title="ms per token", type="log")
    return _layout(fig, "What one token costs: prefill vs decode")


def window_bytes_figure(full: list[int], windowed: list[int], window: int, own_window: int | None = None) -> go.Figure:
    """Measured cache size after the prefill and after every decode pass, full cache (the model's own, when it has a
    sliding window of its own: ``own_window``) vs sliding window (MiB)."""
    fig = go.Figure()
    first = "full cache" if own_window is None else f"the model's own cache (window {own_window})"
    for values, name, color in ((full, first, palette.HIGHLIGHT),
                                (windowed, f"sliding window, W = {window}", palette.ACCENT)):
        fig.add_scatter(x=list(range(len(values))), y=[v / MIB for v in values], mode="lines", name=name,
                        line=dict(color=color), customdata=[human_bytes(v) for v in values],
                        hovertemplate="after pass %{x}<br>%{customdata}<extra>" + name + "</extra>")
    fig.update_xaxes(title="decode pass (0 = after the prefill)", tickformat="d")
    fig.update_yaxes(title="KV cache, MiB (measured)", rangemode="tozero")
    return _layout(fig, "KV cache size over the run")


def template_figure(labels: list[str], cosines: list[float], row_norms: list[float]) -> go.Figure:
    """How well h matches each top token's row of W (cos θ), with each row's length on hover."""
    fig = go.Figure(go.Bar(x=[short_label(label) for label in labels], y=cosines, name="cos θ (h vs the token's row)",
                           customdata=row_norms, marker_color=palette.ACCENT,
                           hovertext=escaped(labels),
                           hovertemplate=("%{hovertext}<br>cos θ = %{y:.4f}<br>|W_t| = %{customdata:.3f}"
                                          "<extra></extra>")))
    fig.update_yaxes(title_text="cos θ")
    fig.update_xaxes(title_text="token", type="category")
    return _layout(fig, "How closely h points along each top token's template", height=300)
