"""Figures for the attention page: one query's weights as a token strip and as bars, all heads,
the causal triangle, GQA; and the KV cache: its growth over a session, its tensors, the memory
calculator, prefill vs decode. Pure functions of arrays and labels; every label is escaped.
"""
from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from autoreg_core.engine.kv_cache import CachePoint, LayerCacheShape
from autoreg_core.engine.model_spec import ModelSpec, gqa_group
from autoreg_core.experiments.attention_rows import MISSING
from autoreg_ui import palette
from autoreg_ui.format import human_bytes
from autoreg_ui.labels import escaped, short_label
from autoreg_ui.lessons.attention import sliding_text
from autoreg_ui.lessons.attention import text as att_text

QUERY_COLOR = palette.HIGHLIGHT
PROMPT_COLOR = palette.MUTED
DECODE_COLOR = palette.ACCENT
MISSING_COLOR = palette.FADED
# one colour per cached K/V head (cycled past six)
KV_COLORS = [palette.ACCENT, palette.HIGHLIGHT, palette.GOOD, palette.CUMULATIVE, palette.INK, palette.RAW]
MAX_TICK_LABELS = 80  # beyond this many tokens, axis labels would overlap: show positions only
MAX_HOVER_TEXT = 120  # per-cell hover text up to this many rows


def attention_bar_figure(labels: list[str], weights, n_prompt: int, title: str) -> go.Figure:
    """Bars over cached positions: how much of the new token's attention each key received."""
    w = np.asarray(weights, dtype=np.float64)
    x = list(range(len(w)))
    colors = [PROMPT_COLOR if i < n_prompt else DECODE_COLOR for i in x]
    if x:
        colors[-1] = QUERY_COLOR
    bar = dict(type="bar", x=x, y=w, marker=dict(color=colors),
               customdata=[html.escape(labels[i]) if i < len(labels) else "" for i in x],
               hovertemplate="position %{x}: %{customdata}<br>weight %{y:.4f}<extra></extra>",
               name="attention weight")
    axis = dict(title=dict(text="key (cached token)"))
    if 0 < len(x) <= MAX_TICK_LABELS:
        axis.update(tickmode="array", tickvals=x, ticktext=[short_label(labels[i], 14) for i in x], tickangle=-60)
    layout = dict(title=dict(text=title), height=320, margin=dict(l=50, r=10, t=75, b=60), showlegend=False,
                  yaxis=dict(title=dict(text="attention weight"), rangemode="tozero"), bargap=0.1, xaxis=axis)
    return go.Figure(data=[bar], layout=layout)


def heads_grid_figure(labels: list[str], weights, kv_of_query: list[int], title: str) -> go.Figure:
    """Small multiples: one bar chart per query head of a layer, coloured by the KV head it reads."""
    w = np.asarray(weights, dtype=np.float64)  # [heads, positions]
    n_heads = w.shape[0]
    cols = 3 if n_heads % 3 == 0 or n_heads > 4 else n_heads
    rows = math.ceil(n_heads / cols)
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=[f"head {h} · reads KV {kv_of_query[h]}" for h in range(n_heads)],
                        vertical_spacing=0.12 if rows > 1 else 0.2, horizontal_spacing=0.04)
    x = list(range(w.shape[1]))
    for h in range(n_heads):
        fig.add_trace(go.Bar(
            x=x, y=w[h], marker_color=KV_COLORS[kv_of_query[h] % len(KV_COLORS)], name=f"head {h}",
            customdata=[html.escape(labels[i]) if i < len(labels) else "" for i in x],
            hovertemplate=f"head {h}<br>" + "position %{x}: %{customdata}<br>weight %{y:.4f}<extra></extra>"),
            row=h // cols + 1, col=h % cols + 1)
    fig.update_layout(title=title, height=190 * rows + 70, showlegend=False,
                      margin=dict(l=40, r=10, t=80, b=30), bargap=0.05)
    fig.update_yaxes(range=[0, 1.0 if not w.size else max(1e-6, float(np.nanmax(w))) * 1.05])
    fig.update_annotations(font_size=11)
    return fig


TOP_MARGIN = 110  # the title, the key axis's name and its slanted labels
PRESENTER_TOP_MARGIN = 158  # the same in a projector's type (charts.style grows the type, not the margins)
PRESENTER_TRIANGLE_HEIGHT = 278  # grown by 1.25 on a projector: fits under the step buttons at 720 px


def triangle_figure(z: np.ndarray, labels: list[str], sources: list[str], n_prompt: int,
                    title: str, first: int = 0, height: int | None = None, window: int | None = None) -> go.Figure:
    """Queries down, keys across: the causal triangle, one row per forward pass position.

    Prefill rows and decode rows are marked in a strip on the left; rows that were not captured
    are hatched grey and say so on hover. Future keys are blank (masked). ``z``, ``labels`` and
    ``sources`` may be a window of a long sequence starting at absolute position ``first``;
    ``n_prompt`` is absolute. ``height``: the whole figure's, for a projector's screen (default: grows
    with the rows); its top margin then leaves room for large type above the key labels. ``window``: a sliding
    layer's; keys outside a query's window are masked, blank like the future (``mask_outside_window``).
    """
    N = z.shape[0]
    if window is not None:
        z = mask_outside_window(z, window, first)
    pos = [first + i for i in range(N)]
    raw_labels, labels = labels, escaped(labels)
    if N <= MAX_HOVER_TEXT:
        text = [[f"query {first + q}: {labels[q] if q < len(labels) else ''}<br>key {first + k}: "
                 f"{labels[k] if k < len(labels) else ''}<br>"
                 + ("future: masked" if k > q else ("row not captured" if sources[q] == MISSING
                                                   else sliding_text.OUTSIDE_WINDOW_HOVER
                                                   if window is not None and q - k >= window
                                                   else f"weight {z[q, k]:.4f}"))
                 for k in range(N)] for q in range(N)]
        hover = "%{text}<extra></extra>"
    else:  # keep the page light: positions and weight only
        text, hover = None, "query %{y} · key %{x}<br>weight %{z:.4f}<extra></extra>"
    # phase strip: 0 prefill, 1 decode, 2 missing
    phase_code = [[2 if s == MISSING else (0 if first + q < n_prompt else 1)] for q, s in enumerate(sources)]
    phase_text = [[("prefill" if first + q < n_prompt else "decode step") + (" (not captured)" if s == MISSING else "")]
                  for q, s in enumerate(sources)]
    traces = [
        dict(type="heatmap", z=phase_code, x=[0], y=pos, zmin=0, zmax=2, showscale=False,
             colorscale=[[0, PROMPT_COLOR], [0.5, PROMPT_COLOR], [0.5, DECODE_COLOR], [0.75, DECODE_COLOR],
                         [0.75, MISSING_COLOR], [1, MISSING_COLOR]],
             customdata=phase_text, hovertemplate="query %{y}: %{customdata}<extra></extra>", xaxis="x", yaxis="y"),
        dict(type="heatmap", z=z, x=pos, y=pos, colorscale="Oranges", zmin=0,
             zmax=1 if not np.isfinite(z).any() else float(np.nanmax(z)), colorbar=dict(title=dict(text="weight")),
             hoverongaps=False, text=text, hovertemplate=hover, name="attention", xaxis="x2", yaxis="y2"),
    ]
    shapes = [dict(type="rect", x0=first - 0.5, x1=first + q + 0.5, y0=first + q - 0.5, y1=first + q + 0.5,
                   xref="x2", yref="y2", fillcolor=MISSING_COLOR, line=dict(width=0), layer="below")
              for q, s in enumerate(sources) if s == MISSING]
    if first < n_prompt < first + N:  # the line between the prefill rows and the first decode row
        shapes.append(dict(type="line", x0=first - 0.5, x1=first + N - 0.5, y0=n_prompt - 0.5, y1=n_prompt - 0.5,
                           xref="x2", yref="y2", line=dict(color=DECODE_COLOR, width=2, dash="dash")))
    # One layout dict, as make_subplots(1, 2, column_widths=[0.03, 0.97], shared_yaxes=True,
    # horizontal_spacing=0.005) lays it out: a thin phase strip beside the triangle. Built in one
    # constructor call, it costs a fraction of make_subplots + update_*axes on every click.
    plain = dict(showgrid=False, zeroline=False)
    xaxis = dict(anchor="y", domain=[0.0, 0.02985], showticklabels=False, ticks="", automargin=False,
                 title=dict(text=""), **plain)  # no labels: it reserves no margin (plotly kept 48 px for it)
    xaxis2 = dict(anchor="y2", domain=[0.03485, 1.0], side="top", title=dict(text="key (cached token)"), **plain)
    yaxis = dict(anchor="x", domain=[0.0, 1.0], autorange="reversed", title=dict(text="query (new token)"), **plain)
    yaxis2 = dict(anchor="x2", domain=[0.0, 1.0], matches="y", showticklabels=False, ticks="", **plain)
    if 0 < N <= MAX_TICK_LABELS:
        yaxis.update(tickmode="array", tickvals=pos,
                     ticktext=[f"{first + i}: {short_label(lab, 12)}" for i, lab in enumerate(raw_labels[:N])])
        xaxis2.update(tickmode="array", tickvals=pos, ticktext=[short_label(lab, 10) for lab in raw_labels[:N]],
                      tickangle=-60)
    top = TOP_MARGIN if height is None else PRESENTER_TOP_MARGIN
    height = max(360, min(900, 16 * N + 160)) + 50 if height is None else height
    layout = dict(title=dict(text=title, y=0.99, yanchor="top"), height=height,
                  margin=dict(l=10, r=10, t=top, b=10), showlegend=False, shapes=shapes,
                  xaxis=xaxis, xaxis2=xaxis2, yaxis=yaxis, yaxis2=yaxis2)
    return go.Figure(data=traces, layout=layout)


def mask_outside_window(z: np.ndarray, window: int, first: int = 0) -> np.ndarray:
    """A copy of the triangle with the keys a sliding layer's mask hides (key ≤ query − window) set to NaN, so they
    are drawn blank like the future instead of as weight 0. ``z`` may start at absolute position ``first`` (a
    shift of both axes leaves query − key unchanged)."""
    z = np.array(z, dtype=np.float32, copy=True)
    q, k = np.indices(z.shape)
    z[q - k >= window] = np.nan
    return z


def gqa_figure(kv_of_query: list[int], n_kv_heads: int, selected_head: int | None = None) -> go.Figure:
    """Query heads (top) wired to the cached K/V head each one reads (bottom)."""
    n_heads = len(kv_of_query)
    group = gqa_group(n_heads, n_kv_heads)
    qx = list(range(n_heads))
    kvx = [kv * group + (group - 1) / 2 for kv in range(n_kv_heads)]
    traces = [dict(type="scatter", x=[qx[h], kvx[kv]], y=[1, 0], mode="lines",
                   line=dict(color=KV_COLORS[kv % len(KV_COLORS)], width=4 if selected_head == h else 1.5),
                   hoverinfo="skip", showlegend=False) for h, kv in enumerate(kv_of_query)]
    traces.append(dict(
        type="scatter", x=qx, y=[1] * n_heads, mode="markers+text", text=[f"Q{h}" for h in range(n_heads)],
        textposition="top center", name="query heads",
        marker=dict(size=[22 if selected_head == h else 16 for h in range(n_heads)],
                    color=[KV_COLORS[k % len(KV_COLORS)] for k in kv_of_query], symbol="circle"),
        customdata=list(kv_of_query), hovertemplate="query head %{x} reads KV head %{customdata}<extra></extra>"))
    traces.append(dict(
        type="scatter", x=kvx, y=[0] * n_kv_heads, mode="markers+text", text=[f"K/V {k}" for k in range(n_kv_heads)],
        textposition="bottom center", name="cached K/V heads",
        marker=dict(size=30, symbol="square", color=[KV_COLORS[k % len(KV_COLORS)] for k in range(n_kv_heads)]),
        customdata=[group] * n_kv_heads,
        hovertemplate="KV head %{text}: read by %{customdata} query heads<extra></extra>"))
    layout = dict(height=260, margin=dict(l=10, r=10, t=30, b=10), showlegend=False,
                  xaxis=dict(visible=False, range=[-0.8, n_heads - 0.2]),
                  yaxis=dict(visible=False, range=[-0.5, 1.5]),
                  title=dict(text=f"{n_heads} query heads share {n_kv_heads} cached K/V heads ({group} per group)"))
    return go.Figure(data=traces, layout=layout)


def attention_strip_html(labels: list[str], weights, query_pos: int, n_prompt: int) -> str:
    """Tokens as chips shaded by the attention weight they received (deepest = the row's largest weight).

    The shade is not the only cue: a bar under each chip grows with the weight (none at 0, the full height
    at the row's largest), and a screen reader hears each token with its weight. Keys the query cannot see
    are struck through, the query is outlined, prompt tokens have a dashed border. Every label and
    tooltip is escaped: model output and user text never become HTML.
    """
    w = np.asarray(weights, dtype=np.float64)
    top = float(np.nanmax(w)) if w.size and np.isfinite(w).any() else 0.0
    chips = []
    for pos, label in enumerate(labels):
        spoken = []
        if pos < w.size and np.isfinite(w[pos]):
            share = w[pos] / top if top > 0 else 0.0
            cls = f"atok w{palette.prob_shade(share)}"
            tip = f"position {pos} · weight {w[pos]:.4f}"
            spoken.append(f"attention weight {w[pos]:.1%}")
        else:
            cls = "atok unseen"
            tip = f"position {pos} · not visible to this query"
            spoken.append("not visible to this query")
        if pos == query_pos:
            cls += " query"
            tip += " · the query (new token)"
            spoken.append("the query, the new token")
        if pos < n_prompt:
            cls += " prompt"
            tip += " · prompt"
            spoken.append("prompt")
        chips.append(f'<span role="listitem" class="{cls}" title="{html.escape(tip)}">{html.escape(label)}'
                     f'<span class="sr">, {html.escape(", ".join(spoken))}</span></span>')
    return (ATTENTION_STRIP_CSS + '<div class="attstrip" role="list" aria-label="The text so far, one item per '
            'token, with the attention weight the new token\'s query gave it">' + "".join(chips) + "</div>")


STRIP_BAR_PX = 6  # the bar under the chip with the row's largest weight
# Sent with every strip, so a chip carries a class (`w7`), not an inline style. The chips keep the page's
# dark text on light, opaque shades in either theme (a more specific selector than presenter mode's rule).
ATTENTION_STRIP_CSS = (
    "<style>.attstrip{line-height:2.3;font-family:ui-monospace,monospace;font-size:0.95rem}"
    f"div.attstrip span.atok{{padding:2px 4px 4px;margin:1px;border-radius:4px;white-space:pre;color:{palette.TEXT};"
    "display:inline-block}"
    + "".join(f".attstrip .w{i}{{background:{palette.prob_color(i / palette.PROB_STEPS)};"
              f"box-shadow:inset 0 -{round(STRIP_BAR_PX * i / palette.PROB_STEPS)}px 0 {palette.INK}}}"
              for i in range(palette.PROB_STEPS + 1))
    + f".attstrip .unseen{{background:{palette.NOT_VISIBLE};text-decoration:line-through}}"
    f".attstrip .query{{outline:2px solid {DECODE_COLOR}}}"
    f".attstrip .prompt{{border:1px dashed {palette.INK}}}"
    ".attstrip .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}"
    "</style>")


PREFILL_COLOR = palette.MUTED
CACHE_COLOR = palette.HIGHLIGHT
WEIGHT_COLOR = palette.INK
GIB = 1024 ** 3


def cache_growth_figure(points: list[CachePoint], bytes_per_position: float,
                        spec: ModelSpec | None = None) -> go.Figure:
    """Cache length (left axis) and measured bytes (right axis) after the prefill and each step.

    The line starts at an empty cache, jumps by the whole prompt at the prefill, then climbs one
    position per decode step. Both axes share one scale (bytes = positions × bytes per position),
    so the measured byte markers sit exactly on the length line when the formula holds.
    Built in one constructor call from dicts: it is redrawn on every click. With ``spec`` of a model with sliding
    layers, the line is the positions kept (mean over layers: bytes ÷ bytes per position, as ``cache_bytes``
    counts them) and a second line shows the positions in the text.
    """
    if not points:
        return go.Figure(layout=dict(title=dict(text="No forward pass yet: the cache is empty"), height=300))
    sliding = spec is not None and bool(spec.sliding_layers)

    def kept(n: int) -> float:  # positions kept, mean over layers: what ``cache_bytes`` counts
        return sum(spec.positions_kept(layer, n) for layer in range(spec.n_layers)) / spec.n_layers if sliding else n

    xs = [0] + [p.step for p in points]  # from an empty cache; "hv": a step holds until the next one
    texts = [0] + [p.positions for p in points]
    lengths = [0] + [kept(p.positions) for p in points] if sliding else texts
    in_text = " in the text" if sliding else ""
    traces = [
        dict(type="scatter", x=xs, y=lengths, mode="lines", line=dict(color=DECODE_COLOR, width=2, shape="hv"),
             name=sliding_text.KEPT_LINE if sliding else "cache length",
             hovertemplate="after step %{x}: %{y:g} positions" + (" kept" if sliding else "") + "<extra></extra>"),
        dict(type="scatter", x=[p.step for p in points], y=[p.measured_bytes for p in points], yaxis="y2",
             mode="markers", name="measured bytes", marker=dict(color=CACHE_COLOR, size=7, symbol="circle-open"),
             customdata=[[p.phase, human_bytes(p.measured_bytes), p.formula_bytes, p.positions] for p in points],
             hovertemplate=("%{customdata[0]} %{x}: %{customdata[3]} positions" + in_text + "<br>measured %{y:,} B "
                            "(%{customdata[1]})<br>formula %{customdata[2]:,} B<extra></extra>")),
    ]
    if sliding:  # the text goes on growing while the kept line flattens
        traces.insert(0, dict(type="scatter", x=xs, y=texts, mode="lines", name=sliding_text.GROWTH_TEXT_LINE,
                              line=dict(color=PREFILL_COLOR, width=1.5, dash="dot", shape="hv"),
                              hovertemplate="after step %{x}: %{y} positions in the text<extra></extra>"))
    top = max(texts) * 1.08 + 1
    first = points[0]
    layout = dict(
        title=dict(text=sliding_text.growth_title(spec) if sliding else "KV cache: prefill jump, then +1 row per step"),
        height=340, margin=dict(l=50, r=60, t=50, b=40), legend=dict(orientation="h", y=-0.2),
        xaxis=dict(title=dict(text="decode step (0 = prefill)"), rangemode="tozero", tickformat="d",
                   dtick=max(1, -(-points[-1].step // 10))),
        yaxis=dict(title=dict(text=sliding_text.growth_axis(spec) if sliding else "positions in the cache"),
                   range=[0, top]),
        yaxis2=dict(title=dict(text="bytes (measured)"), overlaying="y", side="right",
                    range=[0, top * bytes_per_position], showgrid=False),
        annotations=[dict(x=0, y=kept(first.positions),
                          text=(sliding_text.growth_annotation(spec, first.positions, kept(first.positions))
                                if sliding else f"prefill: +{first.positions} at once"),
                          showarrow=True, arrowhead=2, ax=50, ay=-10)])
    return go.Figure(data=traces, layout=layout)


FORMULA_LATEX = (r"\text{bytes} = 2 \times \text{layers} \times \text{batch} \times \text{kv\_heads} \times "
                 r"\text{head\_dim} \times \text{positions} \times \text{bytes per element}")


def formula_latex(spec: ModelSpec, positions: int, batch: int = 1) -> str:
    """The cache formula with this model's numbers filled in, and its result from ``spec``."""
    total = spec.cache_bytes(positions, batch)
    if spec.sliding_layers:  # a sliding layer keeps fewer positions: in the template's order, layers and positions
        kept = [spec.positions_kept(layer, positions) for layer in range(spec.n_layers)]
        rest = r" \times ".join(f"{f:,}" for f in (batch, spec.n_kv_heads, spec.head_dim))
        if len(set(kept)) == 1:  # every layer keeps as many: layers × … × positions kept
            text = (rf"2 \times {spec.n_layers:,} \times {rest} \times \underbrace{{{kept[0]:,}}}_{{"
                    r"\text{positions kept}}" + rf" \times {spec.cache_bytes_per_element:g} = {total:,}")
        else:  # layers keep different counts: layers × positions becomes a sum over the groups of layers
            groups = " + ".join(rf"{kept.count(n):,} \times {n:,}" for n in sorted(set(kept), reverse=True))
            text = (rf"2 \times \underbrace{{({groups})}}_{{\text{{layers}} \times \text{{positions kept}}}} \times "
                    rf"{rest} \times {spec.cache_bytes_per_element:g} = {total:,}")
        return text.replace(",", "{,}") + r"\ \text{bytes}"
    factors = [2, spec.n_layers, batch, spec.n_kv_heads, spec.head_dim, positions]
    text = r" \times ".join(f"{f:,}" for f in factors) + rf" \times {spec.cache_bytes_per_element:g} = {total:,}"
    return text.replace(",", "{,}") + r"\ \text{bytes}"


def shapes_table(shapes: list[LayerCacheShape]) -> list[dict]:
    """One row per layer: the K and V tensor shapes, their dtype and measured bytes."""
    return [{"layer": s.layer, "K shape": str(list(s.keys)), "V shape": str(list(s.values)), "dtype": s.dtype,
             "bytes (K+V)": s.nbytes} for s in shapes]


def memory_figure(spec: ModelSpec, max_len: int | None = None) -> go.Figure:
    """Cache bytes against sequence length (a straight line, bent where sliding windows fill) next to the weights.

    ``spec`` carries the chosen sequence length, batch and both precisions (weights, cache).
    """
    seq_len, batch = spec.seq_len, spec.batch
    max_len = max(int(max_len or 0), seq_len * 2, 16)
    xs = sorted({0, *[round(max_len * i / 64) for i in range(65)], seq_len})
    here = spec.cache_bytes(seq_len, batch)
    traces = [
        dict(type="scatter", x=xs, y=[spec.cache_bytes(x, batch) / GIB for x in xs], mode="lines", name="KV cache",
             line=dict(color=CACHE_COLOR, width=3),
             hovertemplate="%{x:,} tokens: %{y:.3f} GiB of cache<extra></extra>"),
        dict(type="scatter", x=[xs[0], xs[-1]], y=[spec.weight_bytes / GIB] * 2, mode="lines", name="weights",
             line=dict(color=WEIGHT_COLOR, dash="dash"), hovertemplate="weights: %{y:.3f} GiB<extra></extra>"),
        dict(type="scatter", x=[seq_len], y=[here / GIB], mode="markers", name="chosen length",
             marker=dict(color=CACHE_COLOR, size=12),
             hovertemplate=f"{seq_len:,} tokens × batch {batch}: {human_bytes(here)}<extra></extra>"),
    ]
    title = "<br>".join(html.escape(line, quote=False) for line in (att_text.memory_title(spec),
                                                                     att_text.memory_caption(spec)))
    layout = dict(title=dict(text=title),
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
