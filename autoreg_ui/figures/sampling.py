"""Figures for the sampling lab: the stage-by-stage pipeline, the draw, strategies, the sweep.

Pure functions from ``autoreg_core.stages`` results to plotly figures. Token labels are passed
in (the page makes them with ``tokens.single_token_view``) and are HTML-escaped here, because
plotly reads tick and hover text as a small subset of HTML.
"""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from autoreg_core.stages import (GREEDY, MIN_P, RAW, TOP_P, InverseCdfDraw, ManyDraws, Pipeline, StrategyRow, Sweep)

KEPT_COLOR = "#1f6feb"
RAW_COLOR = "#6e7781"
REMOVED_COLOR = "#d0d7de"
CHOSEN_COLOR = "#e8590c"
CUM_COLOR = "#8250df"
EMPIRICAL_COLOR = "#e8590c"


def short_label(label: str, n: int = 12) -> str:
    """A chart label cut to ``n`` characters and escaped (plotly reads a little HTML in labels)."""
    label = label if len(label) <= n else label[: n - 1] + "…"
    return html.escape(label)


def _ticks(labels: list[str]) -> tuple[list[int], list[str]]:
    return list(range(len(labels))), [short_label(lab) for lab in labels]


def pipeline_figure(pipeline: Pipeline, ids: list[int], labels: list[str], chosen: int | None = None) -> go.Figure:
    """One panel per stage over the same top tokens.

    Raw logits as bars; every later panel shows the probabilities after the stage (softmax of
    what is left). A token removed by the stage keeps a grey bar at its probability just before
    the cut; tokens removed earlier show a grey ✕ naming the stage. The top-p panel adds the
    cumulative sum and its cut-off; the min-p panel its threshold.
    """
    stages = pipeline.stages
    n_panels = len(stages) + 1
    cols = 2
    rows = math.ceil(n_panels / cols)
    titles = [html.escape(_stage_title(s)) for s in stages] + [html.escape(_final_title(pipeline))]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=0.14 / max(rows - 2, 1) + 0.06,
                        horizontal_spacing=0.07)
    x, ticktext = _ticks(labels)
    idx = torch.tensor(ids, dtype=torch.long)
    hover_lab = [html.escape(lab) for lab in labels]
    for k, stage in enumerate(stages):
        r, c = k // cols + 1, k % cols + 1
        if stage.name == RAW:
            vals = stage.scores[idx].tolist()
            fig.add_trace(go.Bar(x=x, y=[v if math.isfinite(v) else None for v in vals], marker_color=RAW_COLOR,
                                 customdata=list(zip(hover_lab, stage.probs[idx].tolist(), ids)),
                                 hovertemplate="%{customdata[0]} (id %{customdata[2]})<br>logit %{y:.3f}"
                                               "<br>softmax %{customdata[1]:.4f}<extra></extra>",
                                 showlegend=False), row=r, col=c)
            fig.update_yaxes(title_text="logit", row=r, col=c)
        else:
            before = stages[k - 1].probs[idx].tolist()
            after = stage.probs[idx].tolist()
            removed_by = pipeline.removed_by[idx].tolist()
            colors, heights, texts = [], [], []
            for i in range(len(ids)):
                rb = removed_by[i]
                if rb == k:  # removed by this very stage: grey, at its height just before the cut
                    colors.append(REMOVED_COLOR)
                    heights.append(before[i])
                    texts.append(f"removed by {stage.name}")
                elif 0 <= rb < k:  # removed earlier
                    colors.append(REMOVED_COLOR)
                    heights.append(0.0)
                    texts.append(f"removed by {stages[rb].name}")
                else:
                    colors.append(CHOSEN_COLOR if chosen is not None and ids[i] == chosen and k == len(stages) - 1
                                  else KEPT_COLOR)
                    heights.append(after[i])
                    texts.append("kept")
            fig.add_trace(go.Bar(x=x, y=heights, marker_color=colors,
                                 customdata=list(zip(hover_lab, texts, after, ids)),
                                 hovertemplate="%{customdata[0]} (id %{customdata[3]})<br>%{customdata[1]}"
                                               "<br>probability now %{customdata[2]:.4f}<extra></extra>",
                                 showlegend=False), row=r, col=c)
            gone_x = [x[i] for i in range(len(ids)) if 0 <= removed_by[i] < k]
            gone_t = [_short_stage(stages[removed_by[i]].name) for i in range(len(ids)) if 0 <= removed_by[i] < k]
            if gone_x:
                fig.add_trace(go.Scatter(x=gone_x, y=[0] * len(gone_x), mode="markers", marker_symbol="x-thin",
                                         marker_line_width=1.5, marker_line_color="#8c959f", marker_size=8,
                                         text=gone_t, hovertemplate="removed by %{text}<extra></extra>",
                                         showlegend=False), row=r, col=c)
            if stage.name == TOP_P and stage.active:
                entering = stages[k - 1].probs[idx]
                cum = torch.cumsum(entering.double(), dim=0).tolist()
                fig.add_trace(go.Scatter(x=x, y=cum, mode="lines+markers", line_color=CUM_COLOR, marker_size=4,
                                         hovertemplate="cumulative %{y:.3f}<extra></extra>", showlegend=False),
                              row=r, col=c)
                fig.add_hline(y=pipeline.config.top_p, line_dash="dot", line_color=CUM_COLOR, row=r, col=c)
                kept_pos = [i for i in range(len(ids)) if removed_by[i] < 0 or removed_by[i] > k]
                if kept_pos and stage.threshold is not None and max(kept_pos) < len(ids) - 1:
                    cut = max(kept_pos) + 0.5
                    fig.add_vline(x=cut, line_dash="dash", line_color=CUM_COLOR, row=r, col=c)
                    fig.add_annotation(x=cut, y=min(1.0, stage.threshold), text=f"Σ = {stage.threshold:.3f}",
                                       showarrow=False, xanchor="left", yanchor="bottom", font_color=CUM_COLOR,
                                       row=r, col=c)
            if stage.name == MIN_P and stage.active and stage.threshold is not None:
                fig.add_hline(y=stage.threshold, line_dash="dot", line_color=CUM_COLOR, row=r, col=c,
                              annotation_text=f"cut-off {stage.threshold:.4f}", annotation_font_color=CUM_COLOR)
            fig.update_yaxes(title_text="probability", rangemode="tozero", row=r, col=c)
    # final panel: the renormalised distribution the draw uses
    r, c = (n_panels - 1) // cols + 1, (n_panels - 1) % cols + 1
    final = pipeline.probs[idx].tolist()
    colors = [CHOSEN_COLOR if chosen is not None and ids[i] == chosen else
              (KEPT_COLOR if final[i] > 0 else REMOVED_COLOR) for i in range(len(ids))]
    fig.add_trace(go.Bar(x=x, y=final, marker_color=colors, customdata=list(zip(hover_lab, ids)),
                         hovertemplate="%{customdata[0]} (id %{customdata[1]})<br>probability %{y:.4f}<extra></extra>",
                         showlegend=False), row=r, col=c)
    fig.update_yaxes(title_text="probability", rangemode="tozero", row=r, col=c)
    for k in range(n_panels):
        fig.update_xaxes(tickvals=x, ticktext=ticktext, tickangle=-60, row=k // cols + 1, col=k % cols + 1)
    fig.update_layout(height=260 * rows + 60, margin=dict(l=40, r=20, t=50, b=40), bargap=0.15)
    return fig


def _short_stage(name: str) -> str:
    return name


def _stage_title(stage) -> str:
    if stage.name == RAW:
        return "1. raw logits"
    suffix = f" — removed {len(stage.removed)}, {stage.kept} left" if stage.active else " (no change)"
    if stage.name == GREEDY:
        suffix = " — 1 left"
    return f"{stage.title}{suffix}"


def _final_title(pipeline: Pipeline) -> str:
    if pipeline.fallback:
        return "renormalised: fallback to the top token"
    return f"renormalised: {pipeline.kept} token{'s' if pipeline.kept != 1 else ''} left"


def draw_figure(draw: InverseCdfDraw, probs: torch.Tensor, labels: dict[int, str], max_show: int = 25) -> go.Figure:
    """Inverse-CDF draw: the kept tokens most likely first, their cumulative sum, and where u fell.

    When u lands far down the tail, the first ``max_show`` tokens are drawn, then a gap, then the
    few tokens around the drawn one (its rank is in the tick label).
    """
    n = draw.order.numel()
    positions = list(range(min(n, max_show)))
    if draw.position >= max_show:
        positions += [-1] + list(range(max(max_show, draw.position - 2), min(n, draw.position + 3)))
    cdf_all = draw.cdf
    p_all = probs.double()
    x, y, base, colors, ticks, hover = [], [], [], [], [], []
    line_x, line_y = [], []
    for slot, pos in enumerate(positions):
        if pos < 0:
            ticks.append("…")
            continue
        tid = int(draw.order[pos])
        lo = float(cdf_all[pos - 1]) if pos > 0 else 0.0
        hi = float(cdf_all[pos])
        x.append(slot)
        y.append(float(p_all[tid]))
        base.append(lo)
        colors.append(CHOSEN_COLOR if pos == draw.position else KEPT_COLOR)
        name = labels.get(tid, str(tid))
        ticks.append(short_label(name) if pos < max_show else f"#{pos + 1} {short_label(name)}")
        hover.append((lo, hi, html.escape(name), pos + 1))
        line_x.append(slot)
        line_y.append(hi)
    chosen_slot = positions.index(draw.position)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=y, base=base, name="interval of each token", marker_color=colors,
                         customdata=hover,
                         hovertemplate="%{customdata[2]} (rank %{customdata[3]}): "
                                       "[%{customdata[0]:.4f}, %{customdata[1]:.4f})<extra></extra>"))
    fig.add_trace(go.Scatter(x=line_x, y=line_y, mode="lines+markers", line_shape="hv",
                             name="cumulative probability", line_color=CUM_COLOR, marker_size=4))
    fig.add_hline(y=draw.u, line_dash="dash", line_color=CHOSEN_COLOR,
                  annotation_text=f"u = {draw.u:.4f}", annotation_position="top left",
                  annotation_font_color=CHOSEN_COLOR)
    fig.add_trace(go.Scatter(x=[chosen_slot], y=[draw.u], mode="markers", marker_symbol="star", marker_size=16,
                             marker_color=CHOSEN_COLOR, name="drawn token"))
    fig.update_xaxes(tickvals=list(range(len(positions))), ticktext=ticks, tickangle=-60)
    fig.update_yaxes(range=[0, 1.02], title_text="cumulative probability")
    fig.update_layout(height=360, margin=dict(l=40, r=20, t=30, b=40), legend=dict(orientation="h", y=1.12))
    return fig


def strategies_figure(rows: list[StrategyRow], ids: list[int], labels: list[str]) -> go.Figure:
    """Small multiples: the same top tokens under each strategy; grey = filtered out."""
    n = len(rows)
    cols = 4 if n > 4 else n
    nrows = math.ceil(n / cols)
    titles = [html.escape(r.name) + "<br>" + html.escape(f"{r.kept:,} kept · H = {abs(r.entropy_bits):.2f} bits")
              for r in rows]
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=titles, shared_yaxes=True,
                        vertical_spacing=0.3 if nrows > 1 else 0.1, horizontal_spacing=0.03)
    x, ticktext = _ticks(labels)
    idx = torch.tensor(ids, dtype=torch.long)
    for k, row in enumerate(rows):
        probs = row.pipeline.probs[idx].tolist()
        raw = row.pipeline.stages[0].probs[idx].tolist()
        heights = [probs[i] if probs[i] > 0 else raw[i] for i in range(len(ids))]
        colors = [KEPT_COLOR if probs[i] > 0 else REMOVED_COLOR for i in range(len(ids))]
        fig.add_trace(go.Bar(x=x, y=heights, marker_color=colors, showlegend=False,
                             customdata=list(zip([html.escape(lab) for lab in labels], probs)),
                             hovertemplate="%{customdata[0]}<br>probability %{customdata[1]:.4f}<extra></extra>"),
                      row=k // cols + 1, col=k % cols + 1)
        fig.update_xaxes(tickvals=x, ticktext=ticktext, tickangle=-70, tickfont_size=9,
                         row=k // cols + 1, col=k % cols + 1)
    fig.update_yaxes(range=[0, 1.0])
    fig.update_annotations(font_size=11)
    fig.update_layout(height=310 * nrows + 40, margin=dict(l=40, r=10, t=50, b=30), bargap=0.1)
    return fig


def sweep_figure(sweep: Sweep, current_temperature: float | None = None) -> go.Figure:
    """Entropy, top-token probability and the 90 % set size against temperature."""
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07,
                        subplot_titles=("entropy (bits)", "probability of the top token",
                                        f"tokens needed to cover {sweep.mass:.0%} of the mass"))
    t = sweep.temperatures
    fig.add_trace(go.Scatter(x=t, y=sweep.entropy_bits, mode="lines", line_color=KEPT_COLOR, showlegend=False,
                             hovertemplate="T %{x:.2f}: %{y:.2f} bits<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=t, y=sweep.top_prob, mode="lines", line_color=CHOSEN_COLOR, showlegend=False,
                             hovertemplate="T %{x:.2f}: %{y:.4f}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Scatter(x=t, y=sweep.cover, mode="lines", line_color=CUM_COLOR, showlegend=False,
                             hovertemplate="T %{x:.2f}: %{y} tokens<extra></extra>"), row=3, col=1)
    fig.update_yaxes(type="log", row=3, col=1)
    fig.update_yaxes(range=[0, 1.02], row=2, col=1)
    fig.add_vline(x=1.0, line_dash="dot", line_color=RAW_COLOR)
    if current_temperature is not None and current_temperature > 0:
        fig.add_vline(x=current_temperature, line_dash="dash", line_color=CHOSEN_COLOR,
                      annotation_text=f"T = {current_temperature:g}", annotation_position="top right")
    fig.update_xaxes(title_text="temperature", row=3, col=1)
    fig.update_layout(height=620, margin=dict(l=40, r=20, t=40, b=40))
    return fig


def draws_figure(ids: list[int], labels: list[str], probs: torch.Tensor, draws: ManyDraws) -> go.Figure:
    """Empirical frequencies of N draws next to the probabilities, with ±2 standard errors."""
    x, ticktext = _ticks(labels)
    idx = torch.tensor(ids, dtype=torch.long)
    p = probs.double()[idx].tolist()
    f = draws.freqs[idx].tolist()
    err = [2 * math.sqrt(max(q * (1 - q), 0.0) / draws.n) for q in p]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=p, name="probability", marker_color=KEPT_COLOR,
                         error_y=dict(type="data", array=err, color="#57606a", thickness=1)))
    fig.add_trace(go.Bar(x=x, y=f, name=f"frequency in {draws.n:,} draws", marker_color=EMPIRICAL_COLOR))
    fig.update_xaxes(tickvals=x, ticktext=ticktext, tickangle=-60)
    fig.update_yaxes(title_text="share", rangemode="tozero")
    fig.update_layout(barmode="group", height=360, margin=dict(l=40, r=20, t=30, b=40),
                      legend=dict(orientation="h", y=1.12))
    return fig
