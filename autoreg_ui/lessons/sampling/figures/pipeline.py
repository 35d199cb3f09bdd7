"""Figures for the sampling lab: the stage-by-stage pipeline, the draw, many draws, strategies, the sweep.

Pure functions from ``decode.Pipeline`` and ``autoreg_core.experiments.sampling_lab`` results to plotly figures. Token
labels are passed in and escaped here (plotly reads tick and hover text as a little HTML).
"""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from autoreg_core.engine.decode import ARGMAX, MIN_P, RAW, TOP_P, Pipeline, Stage
from autoreg_core.experiments.sampling_lab import InverseCdfDraw, ManyDraws, StrategyRow, Sweep
from autoreg_ui import palette
from autoreg_ui.labels import escaped, short_label
from autoreg_ui.lessons.sampling import text as sampling_text

KEPT_COLOR = palette.ACCENT
RAW_COLOR = palette.RAW
REMOVED_COLOR = palette.FADED
CHOSEN_COLOR = palette.HIGHLIGHT
CUM_COLOR = palette.CUMULATIVE
PANEL_COLUMNS = 3  # six panels in two rows: the whole pipeline fits one screen
# Every probability panel shares one fixed axis, so a flatter distribution (a higher temperature) looks flatter;
# a little above 1 so the top-p line at p = 1 and the cumulative sum's last point stay inside the panel.
PROB_RANGE = (0.0, 1.05)
PROB_TICKS = (0.0, 0.5, 1.0)
HEIGHT = 520  # the whole figure (two rows of panels), in px
PRESENTER_HEIGHT = 270  # on a projector (charts.style grows it by 1.25): fits under the step buttons at 720 px
PRESENTER_TOKENS = 10  # on a projector at most this many tokens a panel: their names in large type do not overlap


def _ticks(labels: list[str]) -> tuple[list[int], list[str]]:
    return list(range(len(labels))), [short_label(lab) for lab in labels]


PANEL_SPACING = 0.06  # between the columns of panels (a fraction of the figure's width): room for the tick numbers


def _panel_grid(n_panels: int) -> list[tuple[str, str, list[float], list[float]]]:
    """(x axis, y axis, x domain, y domain) of each panel, left to right then down, ``PANEL_COLUMNS`` a row:
    the grid make_subplots(rows, PANEL_COLUMNS, horizontal_spacing=PANEL_SPACING, vertical_spacing=…) lays out,
    without the empty cell after an odd number of panels."""
    rows = math.ceil(n_panels / PANEL_COLUMNS)
    gap = 0.14 / max(rows - 2, 1) + 0.06
    width = (1.0 - PANEL_SPACING * (PANEL_COLUMNS - 1)) / PANEL_COLUMNS
    height = (1.0 - gap * (rows - 1)) / rows
    cells = []
    for k in range(n_panels):
        col, up = k % PANEL_COLUMNS, rows - 1 - k // PANEL_COLUMNS  # ``up``: rows below this one
        left, bottom = col * width + col * PANEL_SPACING, up * height + up * gap
        n = "" if k == 0 else str(k + 1)
        cells.append((f"x{n}", f"y{n}", [left, left + width], [max(0.0, bottom), min(1.0, bottom + height)]))
    return cells


def _y_axis(k: int, cells: list, title: str, fixed: bool) -> dict:
    """Panel ``k``'s y axis: named in the first column only (a name in another column would be drawn over the
    panel to its left); ``fixed``: the probability axis every probability panel shares."""
    xa, _, _, y_domain = cells[k]
    axis = dict(anchor=xa, domain=y_domain, title=dict(text=title if k % PANEL_COLUMNS == 0 else ""))
    if fixed:
        axis.update(range=list(PROB_RANGE), tickvals=list(PROB_TICKS), autorange=False)
    return axis


def pipeline_figure(pipeline: Pipeline, ids: list[int], labels: list[str], chosen: int | None = None,
                    height: int = HEIGHT) -> go.Figure:
    """One panel per stage over the same tokens, then the renormalised distribution the draw uses.

    Raw logits as bars; every later panel shows the probabilities after its stage, all on the same 0–1 axis.
    A token removed by the stage keeps a grey bar at its probability just before the cut; one removed earlier
    shows a grey ✕ naming the stage. The top-p panel adds the cumulative sum and its cut-off; min-p its
    threshold. Panel titles are one short line, so three panels a row fit a projector's type.
    Built in one constructor call from dicts (the lab redraws it on every slider move): make_subplots,
    add_hline and one update per axis cost several times more.
    """
    stages, idx = pipeline.stages, torch.tensor(ids, dtype=torch.long)
    cells = _panel_grid(len(stages) + 1)
    removed_by = pipeline.removed_by()[idx].tolist()
    x, ticktext = _ticks(labels)
    hover_labels = escaped(labels)
    fig = dict(data=[], shapes=[], annotations=[
        dict(text=title, x=sum(xd) / 2.0, xanchor="center", xref="paper", y=yd[1], yanchor="bottom",
             yref="paper", showarrow=False, font=dict(size=15))
        for title, (_, _, xd, yd) in zip([_stage_title(s) for s in stages] + [_final_title(pipeline)], cells)])
    layout = dict(height=height, margin=dict(l=50, r=10, t=30, b=10), bargap=0.15)
    for k, (xa, ya, x_domain, _) in enumerate(cells):
        lowest = k + PANEL_COLUMNS >= len(cells)  # token names under the lowest panel of each column only
        layout["xaxis" + xa[1:]] = dict(anchor=ya, domain=x_domain, tickvals=x, ticktext=ticktext, tickangle=-60,
                                        showticklabels=lowest, automargin=True)
        layout["yaxis" + ya[1:]] = _y_axis(k, cells, "probability", fixed=True)
        if k == len(stages):
            final = pipeline.probs[idx].tolist()
            colors = [CHOSEN_COLOR if ids[i] == chosen else KEPT_COLOR if final[i] > 0 else REMOVED_COLOR
                      for i in range(len(ids))]
            fig["data"].append(dict(type="bar", x=x, y=final, marker=dict(color=colors), showlegend=False,
                                    customdata=list(zip(hover_labels, ids)), xaxis=xa, yaxis=ya,
                                    hovertemplate="%{customdata[0]} (id %{customdata[1]})<br>probability %{y:.4f}"
                                                  "<extra></extra>"))
        elif stages[k].name == RAW:
            zoom = zoomed_range(stages[k].scores[idx].tolist())
            layout["yaxis" + ya[1:]] = dict(_y_axis(k, cells, "logit", fixed=False), **zoom)
            _raw_panel(fig, stages[k], ids, hover_labels, (xa, ya), floor=zoom["range"][0] if zoom else None)
        else:
            _stage_panel(fig, pipeline, k, ids, hover_labels, removed_by, (xa, ya))
    return go.Figure(data=fig["data"], layout=dict(layout, shapes=fig["shapes"], annotations=fig["annotations"]))


ZOOM_PAD = 0.08  # of the shown logits' spread, below the lowest and above the highest


def zoomed_range(logits: list[float]) -> dict:
    """The raw-logit panel's y axis around the shown logits, not from 0: logits of 34.2 and 31.8 drawn from 0 look
    alike, yet the first is e^2.4 ≈ 11 times as likely (the softmax sees only their differences). The panel's
    title says the axis is zoomed. Empty when no shown logit is finite (plotly's own range then)."""
    finite = [v for v in logits if math.isfinite(v)]
    if not finite:
        return {}
    low, high = min(finite), max(finite)
    pad = max(high - low, 1.0) * ZOOM_PAD
    return dict(range=[low - pad, high + pad], autorange=False)


def _raw_panel(fig: dict, stage: Stage, ids: list[int], hover_labels: list[str], axes: tuple[str, str],
               floor: float | None = None) -> None:
    """The logits as bars rising from ``floor`` (the zoomed axis's bottom), so a higher logit is always a taller bar:
    drawn from 0 on a zoomed axis, negative logits (GPT-2's are) would hang from the top, the best one shortest."""
    idx = torch.tensor(ids, dtype=torch.long)
    vals = [v if math.isfinite(v) else None for v in stage.scores[idx].tolist()]
    heights = vals if floor is None else [None if v is None else v - floor for v in vals]
    fig["data"].append(dict(type="bar", x=list(range(len(ids))), y=heights, base=floor, marker=dict(color=RAW_COLOR),
                            showlegend=False, customdata=list(zip(hover_labels, stage.probs[idx].tolist(), ids, vals)),
                            hovertemplate="%{customdata[0]} (id %{customdata[2]})<br>logit %{customdata[3]:.3f}"
                                          "<br>softmax %{customdata[1]:.4f}<extra></extra>",
                            xaxis=axes[0], yaxis=axes[1]))


def _hline(fig: dict, y: float, axes: tuple[str, str], text: str | None = None) -> None:
    """A dotted line across the panel at ``y`` (what add_hline draws), labelled at its right end."""
    xa, ya = axes
    fig["shapes"].append(dict(type="line", x0=0, x1=1, xref=f"{xa} domain", y0=y, y1=y, yref=ya,
                              line=dict(color=CUM_COLOR, dash="dot")))
    if text is not None:
        fig["annotations"].append(dict(text=text, x=1, xanchor="right", xref=f"{xa} domain", y=y, yanchor="bottom",
                                       yref=ya, showarrow=False, font=dict(color=CUM_COLOR)))


def _stage_panel(fig: dict, pipeline: Pipeline, k: int, ids: list[int], hover_labels: list[str],
                 removed_by: list[int], axes: tuple[str, str]) -> None:
    """Panel ``k``: kept tokens at their new probability, this stage's cuts grey, earlier cuts as ✕."""
    stages, idx = pipeline.stages, torch.tensor(ids, dtype=torch.long)
    stage, before, after = stages[k], stages[k - 1].probs[idx].tolist(), stages[k].probs[idx].tolist()
    bars = []  # (colour, height, what happened) per token
    for i, rb in enumerate(removed_by):
        if rb == k:  # removed by this very stage: grey, at its height just before the cut
            bars.append((REMOVED_COLOR, before[i], f"removed by {stage.name}"))
        elif 0 <= rb < k:
            bars.append((REMOVED_COLOR, 0.0, f"removed by {stages[rb].name}"))
        else:
            bars.append((KEPT_COLOR, after[i], "kept"))
    colors, heights, texts = (list(col) for col in zip(*bars))
    x, (xa, ya) = list(range(len(ids))), axes
    fig["data"].append(dict(type="bar", x=x, y=heights, marker=dict(color=colors), showlegend=False,
                            customdata=list(zip(hover_labels, texts, after, ids)), xaxis=xa, yaxis=ya,
                            hovertemplate="%{customdata[0]} (id %{customdata[3]})<br>%{customdata[1]}"
                                          "<br>probability now %{customdata[2]:.4f}<extra></extra>"))
    earlier = [i for i, rb in enumerate(removed_by) if 0 <= rb < k]
    if earlier:
        fig["data"].append(dict(type="scatter", x=earlier, y=[0] * len(earlier), mode="markers",
                                marker=dict(symbol="x-thin", line=dict(width=1.5, color=palette.MUTED), size=8),
                                text=[stages[removed_by[i]].name for i in earlier], showlegend=False,
                                hovertemplate="removed by %{text}<extra></extra>", xaxis=xa, yaxis=ya))
    if stage.name == TOP_P and stage.active:
        _nucleus_marks(fig, pipeline, k, ids, removed_by, axes)
    if stage.name == MIN_P and stage.active and stage.threshold is not None:
        _hline(fig, stage.threshold, axes, f"cut-off {stage.threshold:.4f}")


def _nucleus_marks(fig: dict, pipeline: Pipeline, k: int, ids: list[int], removed_by: list[int],
                   axes: tuple[str, str]) -> None:
    """The cumulative probability entering top-p, the line at p, and where the kept set ends."""
    stage, (xa, ya) = pipeline.stages[k], axes
    entering = pipeline.stages[k - 1].probs[torch.tensor(ids, dtype=torch.long)]
    fig["data"].append(dict(type="scatter", x=list(range(len(ids))),
                            y=torch.cumsum(entering.double(), dim=0).tolist(), mode="lines+markers",
                            line=dict(color=CUM_COLOR), marker=dict(size=4), showlegend=False,
                            hovertemplate="cumulative %{y:.3f}<extra></extra>", xaxis=xa, yaxis=ya))
    _hline(fig, pipeline.config.top_p, axes)
    kept = [i for i, rb in enumerate(removed_by) if rb < 0 or rb > k]
    if kept and stage.threshold is not None and max(kept) < len(ids) - 1:
        cut = max(kept) + 0.5
        fig["shapes"].append(dict(type="line", x0=cut, x1=cut, xref=xa, y0=0, y1=1, yref=f"{ya} domain",
                                  line=dict(color=CUM_COLOR, dash="dash")))
        fig["annotations"].append(dict(text=f"Σ = {stage.threshold:.3f}", x=cut, xanchor="left", xref=xa,
                                       y=min(1.0, stage.threshold), yanchor="bottom", yref=ya, showarrow=False,
                                       font=dict(color=CUM_COLOR)))


def _stage_title(stage: Stage) -> str:
    """One short line (the stage and the tokens left), escaped: three panels a row fit a projector's type.
    How many a stage removed is on hover (each grey bar names its stage)."""
    if stage.name == RAW:
        return sampling_text.RAW_PANEL_TITLE
    if stage.name == ARGMAX:
        return "greedy: 1 left"  # the stage's own title names the temperature too: too wide for a panel
    if not stage.active:
        return f"{html.escape(stage.title)}: no change"
    if not int(stage.removed.sum()):
        return html.escape(stage.title)
    return f"{html.escape(stage.title)}: {int(stage.kept):,} left"


def _final_title(pipeline: Pipeline) -> str:
    if pipeline.fallback:
        return "renormalised: top token"
    return f"renormalised: {int(pipeline.kept):,} left"


def draw_figure(draw: InverseCdfDraw, probs: torch.Tensor, labels: dict[int, str], max_show: int = 25) -> go.Figure:
    """Inverse-CDF draw: the kept tokens most likely first, their cumulative sum, and where u fell.

    When u lands far down the tail, the first ``max_show`` tokens are drawn, then a gap, then the
    few tokens around the drawn one (its rank is in the tick label).
    """
    n = draw.order.numel()
    positions = list(range(min(n, max_show)))
    if draw.position >= max_show:
        positions += [-1] + list(range(max(max_show, draw.position - 2), min(n, draw.position + 3)))
    shown = [(slot, pos) for slot, pos in enumerate(positions) if pos >= 0]
    order = [int(draw.order[pos]) for _, pos in shown]
    names = [labels.get(tid, str(tid)) for tid in order]
    x = [slot for slot, _ in shown]
    heights = [float(probs[tid]) for tid in order]
    highs = [float(draw.cdf[pos]) for _, pos in shown]
    base = [float(draw.cdf[pos - 1]) if pos > 0 else 0.0 for _, pos in shown]
    colors = [CHOSEN_COLOR if pos == draw.position else KEPT_COLOR for _, pos in shown]
    hover = [(b, h, html.escape(name), pos + 1) for b, h, name, (_, pos) in zip(base, highs, names, shown)]
    ticks = ["…" if pos < 0 else "" for pos in positions]
    for (slot, pos), name in zip(shown, names):
        ticks[slot] = short_label(name) if pos < max_show else f"#{pos + 1} {short_label(name)}"
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=heights, base=base, name="interval of each token", marker_color=colors,
                         customdata=hover, hovertemplate="%{customdata[2]} (rank %{customdata[3]}): "
                                                         "[%{customdata[0]:.4f}, %{customdata[1]:.4f})<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=highs, mode="lines+markers", line_shape="hv",
                             name="cumulative probability", line_color=CUM_COLOR, marker_size=4))
    fig.add_hline(y=draw.u, line_dash="dash", line_color=CHOSEN_COLOR, annotation_text=f"u = {draw.u:.4f}",
                  annotation_position=u_label_corner(draw.u), annotation_font_color=CHOSEN_COLOR)
    fig.add_trace(go.Scatter(x=[positions.index(draw.position)], y=[draw.u], mode="markers", marker_symbol="star",
                             marker_size=16, marker_color=CHOSEN_COLOR, name="drawn token"))
    fig.update_xaxes(tickvals=list(range(len(positions))), ticktext=ticks, tickangle=-60)
    fig.update_yaxes(range=[0, 1.02], title_text="cumulative probability")
    fig.update_layout(height=360, margin=dict(l=40, r=20, t=30, b=40), legend=dict(orientation="h", y=1.12))
    return fig


def u_label_corner(u: float) -> str:
    """Where the "u = …" label goes on its line: the intervals left of the drawn token end below u and those right
    of it start above u, so the label sits above the line at the left for a high u and under it at the right for a
    low one (above the line at the left, a small u's label was drawn over the first interval's bar)."""
    return "top left" if u >= 0.5 else "bottom right"


def strategies_figure(rows: list[StrategyRow], ids: list[int], labels: list[str]) -> go.Figure:
    """Small multiples: the same top tokens under each strategy; grey = filtered out."""
    cols = min(4, len(rows))
    nrows = math.ceil(len(rows) / cols)
    titles = [html.escape(r.name) + "<br>" + html.escape(f"{r.kept:,} kept · H = {abs(r.entropy_bits):.2f} bits")
              for r in rows]
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=titles, shared_yaxes=True,
                        vertical_spacing=0.3 if nrows > 1 else 0.1, horizontal_spacing=0.03)
    x, ticktext = _ticks(labels)
    idx = torch.tensor(ids, dtype=torch.long)
    for k, row in enumerate(rows):
        probs, raw = row.pipeline.probs[idx].tolist(), row.pipeline.raw_probs[idx].tolist()
        cell = dict(row=k // cols + 1, col=k % cols + 1)
        fig.add_trace(go.Bar(x=x, y=[p if p > 0 else r for p, r in zip(probs, raw)], showlegend=False,
                             marker_color=[KEPT_COLOR if p > 0 else REMOVED_COLOR for p in probs],
                             customdata=list(zip(escaped(labels), probs)),
                             hovertemplate="%{customdata[0]}<br>probability %{customdata[1]:.4f}<extra></extra>"),
                      **cell)
        fig.update_xaxes(tickvals=x, ticktext=ticktext, tickangle=-70, tickfont_size=9, **cell)
    fig.update_yaxes(range=[0, 1.0])
    fig.update_annotations(font_size=11)
    fig.update_layout(height=310 * nrows + 40, margin=dict(l=40, r=10, t=50, b=30), bargap=0.1)
    return fig


# Three stacked panels sharing the temperature axis, as make_subplots(rows=3, cols=1, shared_xaxes=True,
# vertical_spacing=0.07) lays them out: (x axis, y axis, the panel's bottom and top).
_SWEEP_PANELS = (("x", "y", 0.7133333333333334, 1.0), ("x2", "y2", 0.3566666666666667, 0.6433333333333333),
                 ("x3", "y3", 0.0, 0.2866666666666667))


def sweep_figure(sweep: Sweep, current_temperature: float | None = None) -> go.Figure:
    """Entropy, top-token probability and the size of the ``sweep.mass`` set against temperature.

    Built in one constructor call from dicts (the lab redraws it on every slider move and draw):
    make_subplots + add_vline cost several times more.
    """
    t = sweep.temperatures
    series = ((sweep.entropy_bits, KEPT_COLOR, "%{y:.2f} bits"), (sweep.top_prob, CHOSEN_COLOR, "%{y:.4f}"),
              (sweep.cover, CUM_COLOR, "%{y} tokens"))
    traces = [dict(type="scatter", x=t, y=values, mode="lines", line=dict(color=color), showlegend=False,
                   hovertemplate=f"T %{{x:.2f}}: {hover}<extra></extra>", xaxis=xa, yaxis=ya)
              for (values, color, hover), (xa, ya, _, _) in zip(series, _SWEEP_PANELS)]
    titles = ("entropy (bits)", "probability of the top token", f"tokens needed to cover {sweep.mass:.0%} of the mass")
    annotations = [dict(text=title, x=0.5, xanchor="center", xref="paper", y=top, yanchor="bottom", yref="paper",
                        showarrow=False, font=dict(size=16)) for title, (_, _, _, top) in zip(titles, _SWEEP_PANELS)]
    marks = [(1.0, dict(color=RAW_COLOR, dash="dot"))]
    if current_temperature is not None and current_temperature > 0:
        marks.append((current_temperature, dict(color=CHOSEN_COLOR, dash="dash")))
        annotations += [dict(text=f"T = {current_temperature:g}", x=current_temperature, xanchor="left", xref=xa,
                             y=1, yanchor="top", yref=f"{ya} domain", showarrow=False)
                        for xa, ya, _, _ in _SWEEP_PANELS]
    shapes = [dict(type="line", x0=x, x1=x, xref=xa, y0=0, y1=1, yref=f"{ya} domain", line=line)
              for x, line in marks for xa, ya, _, _ in _SWEEP_PANELS]
    layout = dict(height=620, margin=dict(l=40, r=20, t=40, b=40), annotations=annotations, shapes=shapes)
    for n, (xa, ya, bottom, top) in enumerate(_SWEEP_PANELS, start=1):
        suffix = "" if n == 1 else str(n)
        layout[f"xaxis{suffix}"] = dict(anchor=ya, domain=[0.0, 1.0])
        layout[f"yaxis{suffix}"] = dict(anchor=xa, domain=[bottom, top])
    for suffix in ("", "2"):
        layout[f"xaxis{suffix}"].update(matches="x3", showticklabels=False)
    layout["yaxis2"]["range"] = [0, 1.02]
    layout["yaxis3"]["type"] = "log"
    layout["xaxis3"]["title"] = dict(text="temperature")
    return go.Figure(data=traces, layout=layout)


def draws_figure(ids: list[int], labels: list[str], probs: torch.Tensor, draws: ManyDraws) -> go.Figure:
    """Frequencies of N draws next to the probabilities; whiskers are ±2 standard errors."""
    x, ticktext = _ticks(labels)
    idx = torch.tensor(ids, dtype=torch.long)
    p = probs.double()[idx].tolist()
    err = [2 * math.sqrt(max(q * (1 - q), 0.0) / draws.n) for q in p]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=p, name="probability", marker_color=KEPT_COLOR,
                         error_y=dict(type="data", array=err, color=palette.INK, thickness=1)))
    fig.add_trace(go.Bar(x=x, y=draws.freqs[idx].tolist(), name=f"frequency in {draws.n:,} draws",
                         marker_color=CHOSEN_COLOR))
    fig.update_xaxes(tickvals=x, ticktext=ticktext, tickangle=-60)
    fig.update_yaxes(title_text="share", rangemode="tozero")
    fig.update_layout(barmode="group", height=360, margin=dict(l=40, r=20, t=30, b=40),
                      legend=dict(orientation="h", y=1.12))
    return fig
