"""Figures for "More serving tricks": speed-up over the draft length, the prefix-cache demonstration, the grammar
mask step by step. Pure plotly builders; every trace has a name and axis titles, so *Numbers as a table* reads."""
from __future__ import annotations

import plotly.graph_objects as go

from autoreg_core.experiments import speculative_math as spec_math
from autoreg_ui import palette
from autoreg_ui.lessons.tricks import text

COLOURS = (palette.ACCENT, palette.HIGHLIGHT, palette.CUMULATIVE, palette.GOOD, palette.INK)


HEIGHT = 360
PROJECTOR_HEIGHT = 280  # beside its sliders in presenter mode, grown by charts.HEIGHT_GROWTH: inside the first screen


def _layout(fig: go.Figure, title: str, height: int = HEIGHT) -> go.Figure:
    """Title, height and legend; at the projector's height the legend moves to the right, so the large type of
    presenter mode does not draw it over the x axis's title in a short chart."""
    legend = (dict(orientation="v", x=1.02, xanchor="left", y=1, yanchor="top") if height == PROJECTOR_HEIGHT
              else dict(orientation="h", y=-0.25))
    fig.update_layout(title=title, height=height, margin=dict(l=60, r=20, t=50, b=45), legend=legend)
    return fig


def speedup_figure(curves: list[tuple[str, spec_math.BestK]], title: str, height: int = HEIGHT) -> go.Figure:
    """Speed-up against k for each (label, best-k reading), its best k marked, and the 1× line of plain decoding.
    A curve keeps its colour by its place in ``curves``: the what-if curve goes first wherever it is drawn. The
    star is in its curve's legend group and not in the legend (the title says what a star marks): a legend of one
    row per curve leaves the plot inside the screen that holds the measurement's button."""
    fig = go.Figure()
    for i, (label, best) in enumerate(curves):
        ks = list(range(1, len(best.curve) + 1))
        colour = COLOURS[i % len(COLOURS)]
        fig.add_scatter(x=ks, y=list(best.curve), mode="lines+markers", name=label, line=dict(color=colour),
                        legendgroup=label,
                        hovertemplate="k = %{x}<br>%{y:.2f}× plain decoding<extra>" + label + "</extra>")
        fig.add_scatter(x=[best.k], y=[best.speedup], mode="markers", name=f"best k for {label}",
                        marker=dict(color=colour, size=14, symbol="star"), legendgroup=label, showlegend=False,
                        hovertemplate=text.BEST_K_HOVER + "%{x}<br>%{y:.2f}×<extra></extra>")
    fig.add_hline(y=1.0, line_dash="dot", annotation_text="plain decoding (1×)")
    fig.update_xaxes(title="draft length k", tickformat="d")
    fig.update_yaxes(title="speed-up, E / (k·c + 1)")
    return _layout(fig, title, height)


def predicted_measured_figure(labels: list[str], predicted: list[float], with_verify: list[float],
                              measured: list[float]) -> go.Figure:
    fig = go.Figure()
    fig.add_bar(x=labels, y=predicted, name="predicted, E/(k·c + 1)", marker_color=palette.SOFT_ACCENT)
    fig.add_bar(x=labels, y=with_verify, name="predicted, E/(k·c + v)", marker_color=palette.CUMULATIVE)
    fig.add_bar(x=labels, y=measured, name="measured", marker_color=palette.HIGHLIGHT)
    fig.update_xaxes(title="prompt · draft")
    fig.update_yaxes(title="speed-up over plain decoding (×)")
    fig.update_layout(barmode="group")
    return _layout(fig, "Predicted beside measured")


def prefix_figure(tabs: int, plain_ms: float, cached_ms: float, hits: int, misses: int) -> go.Figure:
    """Total prefill time both ways; the second bar named by what the demonstration's store did (``hits`` copies,
    ``misses`` prefills: every tab a miss when the store refused the prompt)."""
    fig = go.Figure()
    through = f"through the store: {misses} prefill{'s' * (misses != 1)}, {hits} cop{'y' if hits == 1 else 'ies'}"
    fig.add_bar(x=["every tab prefills", through], y=[plain_ms, cached_ms],
                marker_color=[palette.SOFT_ACCENT, palette.HIGHLIGHT], name="total ms",
                hovertemplate="%{x}<br>%{y:,.0f} ms<extra></extra>")
    fig.update_xaxes(title=f"{tabs} tabs open the same prompt")
    fig.update_yaxes(title="total prefill time (ms)")
    return _layout(fig, "The class's prefills, with and without the prefix cache", height=320)


def mask_figure(allowed: list[int], removed: list[float]) -> go.Figure:
    """Per step: tokens the grammar allowed (log scale) and the probability it removed."""
    steps = list(range(1, len(allowed) + 1))
    fig = go.Figure()
    fig.add_bar(x=steps, y=[100 * r for r in removed], name="probability removed (%)", marker_color=palette.SOFT_ACCENT,
                hovertemplate="step %{x}<br>%{y:.1f}% removed<extra></extra>")
    fig.add_scatter(x=steps, y=allowed, name="allowed tokens", mode="lines+markers", yaxis="y2",
                    line=dict(color=palette.HIGHLIGHT), hovertemplate="step %{x}<br>%{y:,} allowed<extra></extra>")
    fig.update_layout(yaxis=dict(title="probability removed (%)", range=[0, 100]),
                      yaxis2=dict(title="allowed tokens (log scale)", type="log", overlaying="y", side="right",
                                  dtick=1, rangemode="tozero"))
    fig.update_xaxes(title="step", tickformat="d", dtick=1)
    return _layout(fig, "The grammar mask, step by step")
