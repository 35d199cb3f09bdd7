"""Figures for "Under the hood": per-token loss, rotary angles, a cached key, solo vs shared passes."""
from __future__ import annotations

import plotly.graph_objects as go

from autoreg_ui import palette
from autoreg_ui.labels import escaped, short_label
from autoreg_ui.lessons.hood import text

HEIGHT = 320
PROJECTOR_HEIGHT = 225  # presenter mode grows it by charts.HEIGHT_GROWTH: the loss chart then ends on the first screen


def _layout(fig: go.Figure, title: str, height: int = HEIGHT) -> go.Figure:
    """Title, height and legend; at the projector's height the legend moves to the right, so the large type of
    presenter mode does not draw it over the x axis's title in a short chart."""
    legend = (dict(orientation="v", x=1.02, xanchor="left", y=1, yanchor="top") if height == PROJECTOR_HEIGHT
              else dict(orientation="h", y=-0.25))
    fig.update_layout(title=title, height=height, margin=dict(l=60, r=20, t=50, b=45), legend=legend)
    return fig


def loss_figure(labels: list[str], losses: list[float], prompt_terms: int,
                recorded: list[float], height: int = HEIGHT) -> go.Figure:
    """One bar per next-token term (−log p, one pass): prompt targets, then generated ones; the steps'
    recorded −log p as marks on the generated bars."""
    xs = list(range(2, len(losses) + 2))  # the target token's 1-based place in the text
    fig = go.Figure()
    names = token_ticks(labels)
    for lo, hi, name, color in ((0, prompt_terms, "prompt token (one pass)", palette.MUTED),
                                (prompt_terms, len(losses), "generated token (one pass)", palette.ACCENT)):
        if hi > lo:
            fig.add_bar(x=xs[lo:hi], y=losses[lo:hi], name=name, marker_color=color,
                        hovertext=escaped(labels[lo:hi]),
                        hovertemplate="token %{x}: %{hovertext}<br>−log p = %{y:.4f} nats<extra></extra>")
    if recorded:
        fig.add_scatter(x=xs[prompt_terms:prompt_terms + len(recorded)], y=recorded, mode="markers",
                        name="−log-prob the step recorded", marker=dict(color=palette.HIGHLIGHT, symbol="x", size=9),
                        hovertemplate="token %{x}<br>recorded −log p = %{y:.4f} nats<extra></extra>")
    if names is not None:  # the tokens themselves under their bars; a long text keeps the places (hover names them)
        fig.update_xaxes(title=text.LOSS_AXIS_TOKENS, tickvals=xs, ticktext=names)
    else:
        fig.update_xaxes(title=text.LOSS_AXIS_PLACES, tickformat="d")
    fig.update_yaxes(title="−log p, nats", rangemode="tozero")
    return _layout(fig, "Every term of the loss, from one pass", height)


MAX_NAMED_TOKENS = 40  # more than this under one axis would be unreadable: the axis then shows places


def token_ticks(labels: list[str]) -> list[str] | None:
    """The loss chart's tick labels: each predicted token, escaped and shortened; None past ``MAX_NAMED_TOKENS``."""
    if len(labels) > MAX_NAMED_TOKENS:
        return None
    return [short_label(label, 10) for label in labels]


def angles_figure(angles: list[float], position: int) -> go.Figure:
    """θ_i at one position for every dimension pair i (log scale: the pairs span many orders of magnitude)."""
    fig = go.Figure(go.Scatter(x=list(range(len(angles))), y=angles, mode="lines+markers", name=f"θ at {position}",
                               line=dict(color=palette.ACCENT),
                               hovertemplate="pair %{x}<br>θ = %{y:.4g} rad<extra></extra>"))
    fig.update_xaxes(title="dimension pair i", tickformat="d")
    fig.update_yaxes(title="angle θᵢ, radians", type="log")
    return _layout(fig, f"How far each pair is turned at position {position:,}")


def key_figure(cached: list[float], recomputed: list[float], unrotated: list[float]) -> go.Figure:
    """The cache entry's numbers, the key recomputed at its position, and the same key unrotated."""
    dims = list(range(len(cached)))
    fig = go.Figure()
    fig.add_scatter(x=dims, y=unrotated, mode="lines", name="recomputed, not rotated",
                    line=dict(color=palette.MUTED, dash="dot"))
    fig.add_bar(x=dims, y=cached, name="the cache entry", marker_color=palette.SOFT_ACCENT)
    fig.add_scatter(x=dims, y=recomputed, mode="markers", name="recomputed, rotated by its position",
                    marker=dict(color=palette.HIGHLIGHT, symbol="x", size=7))
    fig.update_xaxes(title="dimension of the key (pair i is i and i + d/2)", tickformat="d")
    fig.update_yaxes(title="value")
    return _layout(fig, "One key: in the cache and recomputed", height=340)


def batch_figure(rows: list[int], deltas: list[float], gap: float) -> go.Figure:
    """Largest |Δ logit| per pass size (log), against half the top-two gap: a flip needs more than that."""
    names = [f"{r} rows" for r in rows]
    floor = [max(d, 1e-12) for d in deltas]  # a log axis cannot show 0
    fig = go.Figure()
    fig.add_bar(x=names, y=floor, name="largest |Δ logit| vs alone", marker_color=palette.ACCENT,
                customdata=deltas, hovertemplate="%{x}<br>%{customdata:.2e}<extra></extra>")
    fig.add_scatter(x=names, y=[max(gap / 2, 1e-12)] * len(rows), mode="lines+markers",
                    name="half the top-two gap: a flip needs more", line=dict(color=palette.HIGHLIGHT, dash="dash"),
                    hovertemplate="%{y:.3g}<extra>half the gap</extra>")
    fig.update_xaxes(title="rows in the shared pass", type="category")
    fig.update_yaxes(title="logit units (log scale)", type="log")
    return _layout(fig, "Solo vs shared: the difference against the gap")

