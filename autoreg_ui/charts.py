"""Every chart goes through ``show_chart``: one layout rule (``framed``), presenter styling, PNG/SVG buttons, and a
place in the hand-out.

``style`` is pure (a figure in, a restyled copy out) so tests check it without Streamlit. The export
buttons run in the browser: plotly.js, already loaded to draw the chart, writes the PNG or SVG of the
chart as it is on screen (no image server, no extra package). The script behind them is installed once
per page run (``install_export_script``, from app.py); each chart adds only two plain buttons. A copy of
the script per chart cost the browser about 100 ms per chart per click (``bench/click_cost.py``).
"""
from __future__ import annotations

import html
import math
import re
from collections import OrderedDict

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from autoreg_ui import charts_text, keys
from autoreg_ui.sharing import presenter

# presenter mode: sizes in px (plotly's unit); the tick labels are what the back of the room reads
LARGE = dict(font=20, title=26, axis_title=22, ticks=19, legend=19, annotations=19, text=17, hover=18)
HEIGHT_GROWTH = 1.25
KEEP_CHARTS = 24  # the newest charts of a tab, for the hand-out
TRANSPARENT = "rgba(0,0,0,0)"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")

EXPORT_JS = """
<script>
(function () {
  if (window.__autoregExport) return;
  window.__autoregExport = true;
  document.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-autoreg-chart]");
    if (!button) return;
    const box = document.querySelector(".st-key-" + CSS.escape(button.dataset.autoregChart));
    const chart = box && box.querySelector(".js-plotly-plot");
    if (!chart || !window.Plotly) return;
    const format = button.dataset.format;
    window.Plotly.downloadImage(chart, {format: format, filename: button.dataset.filename,
                                        scale: format === "png" ? 2 : 1});
  });
})();
</script>
<style>
.autoreg-export { display: flex; justify-content: flex-end; gap: 0.4rem; margin-top: -0.4rem; }
.autoreg-export button { border: 1px solid rgba(128,128,128,.45); border-radius: 0.4rem; background: transparent;
  color: inherit; font: inherit; font-size: 0.8rem; padding: 0.1rem 0.6rem; cursor: pointer; opacity: 0.85; }
.autoreg-export button:hover { opacity: 1; border-color: rgba(128,128,128,.9); }
</style>
"""


def file_name(name: str) -> str:
    """A chart's download name: 'autoreg-' + the name with anything but letters, digits, - and _ dropped."""
    clean = _UNSAFE_NAME.sub("-", name).strip("-")[:80] or "chart"
    return clean if clean.startswith("autoreg") else f"autoreg-{clean}"


def style(fig: go.Figure, *, large: bool, dark: bool) -> go.Figure:
    """The figure as shown: unchanged normally; a restyled copy with large type and/or for a dark page.

    Streamlit's chart theme already follows a dark page; only a background the figure sets itself needs
    clearing, so a dark page copies nothing else.
    """
    dark = dark and bool(fig.layout.plot_bgcolor or fig.layout.paper_bgcolor)
    if not (large or dark):
        return fig
    out = go.Figure(fig)
    if large:
        out.update_layout(font_size=LARGE["font"], title_font_size=LARGE["title"],
                          legend_font_size=LARGE["legend"], hoverlabel_font_size=LARGE["hover"])
        out.update_xaxes(tickfont_size=LARGE["ticks"], title_font_size=LARGE["axis_title"])
        out.update_yaxes(tickfont_size=LARGE["ticks"], title_font_size=LARGE["axis_title"])
        out.update_annotations(font_size=LARGE["annotations"])
        for trace in out.data:
            if "textfont" in trace:
                trace.textfont.size = LARGE["text"]
            if "colorbar" in trace:
                trace.colorbar.tickfont.size = LARGE["ticks"]
        if out.layout.height:
            out.update_layout(height=int(out.layout.height * HEIGHT_GROWTH))
    if dark:
        out.update_layout(paper_bgcolor=TRANSPARENT, plot_bgcolor=TRANSPARENT)
    return out


# The one layout rule every chart goes through (``framed``): a one-line title at the top left, the legend in a
# row of its own under it and above the plot, tick labels horizontal where they fit (plotly turns them only
# when they would collide) and axes that grow the margins to hold their labels. Sizes in px at plotly's
# default type (normal) and at presenter mode's; the legend's rows are estimated from its entries' text at a
# width narrower than any chart the app draws at 1280 px, so an estimate errs towards a spare row.
NORMAL_TYPE = dict(title=17, legend=13)
CHAR_WIDTH = 0.58  # of the font size: a generous average for the sans-serif type plotly uses
LEGEND_SWATCH_PX = 46  # a legend entry's symbol and the gap after it
LEGEND_WIDTH_PX = dict(normal=560, large=900)
TOP_PAD_PX = 8
DEFAULT_HEIGHT = 450  # plotly's, when a figure sets none
MIN_PLOT_SHARE = 0.5  # of the height a figure asked for: what its plot keeps however many rows its legend takes
AXIS_TITLE_PX = dict(normal=14, large=LARGE["axis_title"])
TICK_PX = dict(normal=12, large=LARGE["ticks"])


def _legend_entries(fig: go.Figure) -> list[str]:
    """The names the legend shows: traces with a name that are not hidden from it (one entry per legend group)."""
    if fig.layout.showlegend is False:
        return []
    names, groups = [], set()
    for trace in fig.data:
        if not trace.name or getattr(trace, "showlegend", None) is False or trace.type in ("heatmap", "icicle"):
            continue
        group = getattr(trace, "legendgroup", None)
        if group:
            if group in groups:
                continue
            groups.add(group)
        names.append(str(trace.name))
    return names if len(names) > 1 or fig.layout.showlegend else []


def legend_rows(names: list[str], font_px: int, width_px: int) -> int:
    """How many rows a horizontal legend of ``names`` takes in ``width_px`` (entries wrap whole, as plotly does)."""
    rows, used = (1, 0.0) if names else (0, 0.0)
    for name in names:
        entry = len(name) * CHAR_WIDTH * font_px + LEGEND_SWATCH_PX
        if used and used + entry > width_px:
            rows, used = rows + 1, 0.0
        used += entry
    return rows


def split_title(text: str | None) -> tuple[str, str]:
    """A title's first line (what the chart shows) and the rest (shown as a caption under it)."""
    first, _, rest = (text or "").partition("<br>")
    rest = re.sub(r"<br\s*/?>", " ", rest).strip()
    if rest.startswith("(") and rest.endswith(")") and rest.count("(") == 1:  # a bracketed aside reads as a sentence
        rest = rest[1:-1].strip()
    return first.strip(), rest


def framed(fig: go.Figure, *, large: bool = False) -> tuple[go.Figure, str]:
    """The figure under the one layout rule, and the details its title had after its first line (a caption).

    Changes ``fig`` in place (only its layout) and returns it, except a figure marked ``finished``: many tabs
    draw it at once, and two script threads editing it break plotly's dicts mid-iteration. A legend the figure
    placed in container coordinates (at its foot, under subplot titles) stays where it is: it is already clear
    of the plot.
    """
    if getattr(fig, "finished", False):  # laid out when it was made and never edited after
        meta = fig.layout.meta
        return fig, meta.get("details", "") if isinstance(meta, dict) else ""
    title, details = split_title(fig.layout.title.text if fig.layout.title else None)
    if details:  # kept with the figure: a figure drawn again (cached, or the hand-out's copy) keeps its caption
        fig.update_layout(meta=dict(details=details))
    elif isinstance(fig.layout.meta, dict):
        details = fig.layout.meta.get("details", "")
    title_px = LARGE["title"] if large else NORMAL_TYPE["title"]
    legend_px = LARGE["legend"] if large else NORMAL_TYPE["legend"]
    top = TOP_PAD_PX
    if title:
        fig.update_layout(title=dict(text=title, x=0, xref="paper", xanchor="left", yref="container", y=1,
                                     yanchor="top", pad=dict(t=TOP_PAD_PX), automargin=False))
        top += int(title_px * 1.45)
    names = _legend_entries(fig)
    at_foot = fig.layout.legend is not None and fig.layout.legend.yref == "container" and (
        fig.layout.legend.y is not None and fig.layout.legend.y < 0.5)
    legend_at = top if names and not at_foot else None
    if legend_at is not None:
        rows = legend_rows(names, legend_px, LEGEND_WIDTH_PX["large" if large else "normal"])
        top += int(rows * legend_px * 1.75) + 4
    top += _subplot_title_room(fig, legend_px) + _top_axis_room(fig, large)
    _keep_plot_room(fig, max(top, 20), large)
    if legend_at is not None:  # placed in px from the top of the (perhaps grown) figure
        fig.update_layout(legend=dict(orientation="h", xref="paper", x=0, xanchor="left", yref="container",
                                      y=1 - legend_at / (fig.layout.height or DEFAULT_HEIGHT), yanchor="top",
                                      title=None))
    margin = fig.layout.margin
    fig.update_layout(margin=dict(t=max(top, 20), l=margin.l if margin.l is not None else 10,
                                  r=margin.r if margin.r is not None else 10,
                                  b=margin.b if margin.b is not None else 10))
    for axis in (*fig.select_xaxes(), *fig.select_yaxes()):
        axis.automargin = True
        if axis.tickangle is not None and axis.tickangle not in (0, 90, -90) and axis.side != "top":
            axis.tickangle = None  # plotly's own choice: horizontal when the labels fit, turned when they would collide
    return fig, details


def _keep_plot_room(fig: go.Figure, top: int, large: bool) -> None:
    """Grow a figure that the title and legend above its plot would squeeze: its plot keeps room for its y axis's
    title (centred on the plot: a longer title is cut by the chart's edge) and, outside presenter mode,
    ``MIN_PLOT_SHARE`` of the height the figure asked for: a legend of many entries makes the chart taller
    instead. On a projector the first screen is the limit (a lesson stop's chart must end above 720 px), so
    there only the y title grows it."""
    size = "large" if large else "normal"
    asked = fig.layout.height or DEFAULT_HEIGHT
    bottom = (fig.layout.margin.b or 0) + TICK_PX[size] * 1.6 + (
        AXIS_TITLE_PX[size] * 1.6 if _axis_title(fig.layout.xaxis) else 0)
    y_title = _axis_title(fig.layout.yaxis) or ""
    # the y title is centred on the plot and may reach into the margins above and below it, not past the edge
    title_room = len(y_title) * CHAR_WIDTH * AXIS_TITLE_PX[size] + 12 - 2 * min(top, bottom)
    plot = title_room if large else max(asked * MIN_PLOT_SHARE, title_room)
    needed = int(top + bottom + plot)
    if needed > asked:
        fig.update_layout(height=needed)


def _top_axis_room(fig: go.Figure, large: bool) -> int:
    """Room for an x axis drawn above the plot (its tick labels, turned as the figure says, and its title): plotly
    grows the top margin for the axis or for the title, not for both, so the rule adds the axis's share itself."""
    room = 0
    for axis in fig.select_xaxes():
        if axis.side != "top" or axis.showticklabels is False:
            continue
        tick_px = axis.tickfont.size or (LARGE["ticks"] if large else 12)
        longest = max((len(str(t)) for t in axis.ticktext or ()), default=4)
        turned = abs(math.sin(math.radians(axis.tickangle))) if isinstance(axis.tickangle, (int, float)) else 0.0
        title_px = (LARGE["axis_title"] if large else 14) * 1.6 if _axis_title(axis) else 0
        room = max(room, int(tick_px * 1.5 + longest * CHAR_WIDTH * tick_px * turned + title_px + 6))
    return room


def _subplot_title_room(fig: go.Figure, font_px: int) -> int:
    """Room for annotations that sit on top of the plot area (subplot titles), so the legend stays above them."""
    above = [a for a in fig.layout.annotations or () if a.yref == "paper" and a.y is not None and a.y >= 1
             and a.yanchor == "bottom"]
    if not above:
        return 0
    return int(font_px * 1.6)


def chart_config(filename: str) -> dict:
    """plotly.js options: the hover toolbar's camera saves a 2× PNG under the same sensible name."""
    return {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2}}


def export_buttons_html(key: str, filename: str) -> str:
    """Two visible buttons under a chart; the script (installed once per page) saves what is on screen."""
    key_attr = html.escape(re.sub(r"[^A-Za-z0-9_-]", "-", key.strip()))  # as Streamlit names the st-key- class
    name_attr = html.escape(filename)
    buttons = "".join(f'<button type="button" data-autoreg-chart="{key_attr}" data-format="{fmt}" '
                      f'data-filename="{name_attr}" title="Save this chart as {fmt.upper()}">⬇ {fmt.upper()}</button>'
                      for fmt in ("png", "svg"))
    return f'<div class="autoreg-export">{buttons}</div>'


# Streamlit leaves about 6rem above a page's first element; a title there pushed every page's first picture
# down by ~130 px on a laptop. The header bar (its menu at the right) stays; presenter mode has its own spacing.
HEADER_SPACE_CSS = '<style>[data-testid="stMainBlockContainer"] { padding-top: 2.6rem; }</style>'


def install_export_script() -> None:
    """The one click handler (and style) behind every chart's PNG/SVG buttons, and the page's header space; call
    once per page run."""
    st.html(EXPORT_JS if presenter.active() else EXPORT_JS + HEADER_SPACE_CSS, unsafe_allow_javascript=True)


def _values(seq) -> list:
    """A trace's x, y or z as a plain list (plotly keeps tuples, lists or numpy arrays)."""
    return np.asarray(seq).tolist() if seq is not None else []


def _axis_title(axis) -> str | None:
    return axis.title.text if axis is not None and axis.title is not None and axis.title.text else None


def _tree_rows(trace) -> list[tuple[str, object]]:
    """A hierarchical trace's boxes as (path of labels from the root, value), in the trace's order."""
    ids, parents = _values(trace.ids), _values(trace.parents)
    labels, values = _values(trace.labels), _values(trace.values)
    label_of = dict(zip(ids, labels))
    parent_of = dict(zip(ids, parents))

    def path(node: str) -> str:
        names = []
        while node:
            names.append(str(label_of.get(node, node)))
            node = parent_of.get(node, "")
        return " › ".join(reversed(names))
    return [(path(node), value) for node, value in zip(ids, values)]


def figure_table(fig: go.Figure) -> pd.DataFrame:
    """Every number a chart draws, one row per mark: its series, where it sits (x, y) and, for a heatmap, its value.

    Built from the figure's own traces, so the table says exactly what the chart shows (a screen reader or a
    spreadsheet reads this instead of the picture). Columns take the axis titles when the chart has one pair.
    """
    x_name = _axis_title(fig.layout.xaxis) or "x"
    y_name = _axis_title(fig.layout.yaxis) or "y"
    if y_name == x_name:
        y_name = f"{y_name} (y)"
    rows: list[tuple] = []
    for number, trace in enumerate(fig.data):
        series = trace.name or f"series {number + 1}"
        if getattr(trace, "z", None) is not None:  # a heatmap: one row per cell
            z = _values(trace.z)
            ys = _values(trace.y) or list(range(len(z)))
            for i, row in enumerate(z):
                xs = _values(trace.x) or list(range(len(row)))
                rows += [(series, xs[j], ys[i], value) for j, value in enumerate(row)]
            continue
        if getattr(trace, "parents", None) is not None:  # a tree (icicle): one row per box, named by its path
            rows += [(series, path, value, None) for path, value in _tree_rows(trace)]
            continue
        xs, ys = _values(getattr(trace, "x", None)), _values(getattr(trace, "y", None))
        if not xs and not ys:
            continue
        xs = xs or list(range(len(ys)))
        ys = ys or list(range(len(xs)))
        rows += [(series, a, b, None) for a, b in zip(xs, ys)]
    frame = pd.DataFrame(rows, columns=["series", x_name, y_name, "value"])
    if frame["value"].isna().all():
        frame = frame.drop(columns="value")
    if frame["series"].nunique() <= 1:
        frame = frame.drop(columns="series")
    return frame


def show_chart(fig: go.Figure, key: str, filename: str, *, where=None, export: bool = True, keep: bool = True,
               **plotly_kwargs):
    """``st.plotly_chart`` with presenter styling, PNG/SVG buttons and a copy for the hand-out.

    ``where`` is a column, container or ``st.empty()`` placeholder (default: the page); ``export=False``
    and ``keep=False`` for live charts redrawn while something runs. Returns the chart's selection event.
    """
    box = (where if where is not None else st).container()
    name = file_name(filename)
    large = presenter.active()
    shown, details = framed(style(fig, large=large, dark=presenter.dark()), large=large)
    event = box.plotly_chart(shown, key=key, config=chart_config(name), **plotly_kwargs)
    if details:
        box.caption(details)
    if export:
        box.html(export_buttons_html(key, name))
        if box.toggle(charts_text.TABLE_TOGGLE, key=f"{key}{keys.TABLE_SUFFIX}", help=charts_text.TABLE_HELP):
            box.dataframe(figure_table(fig), hide_index=True)  # drawn only when asked: a click stays cheap
    if keep:
        remember(st.session_state, name, fig)
    return event


def kept_store(state) -> OrderedDict:
    """This tab's charts, newest last (slot → (name, figure)), created when missing; the hand-out reads it when
    clicked."""
    kept = state.get(keys.HANDOUT_CHARTS)
    if not isinstance(kept, OrderedDict):
        kept = state[keys.HANDOUT_CHARTS] = OrderedDict()
    return kept


def remember(state, name: str, fig: go.Figure) -> None:
    """Keep the newest figure of each kind for the hand-out (at most ``KEEP_CHARTS``).

    Names that differ only in their numbers (step-3-top-tokens, step-4-top-tokens) are one kind: the
    hand-out shows the latest, as the page did.
    """
    kept = kept_store(state)
    slot = re.sub(r"\d+", "#", name)
    kept.pop(slot, None)
    kept[slot] = (name, fig)
    while len(kept) > KEEP_CHARTS:
        kept.popitem(last=False)


def kept_charts(kept: OrderedDict) -> list[tuple[str, go.Figure]]:
    """A snapshot of the kept charts as (name, figure), oldest first (retried if the page adds one meanwhile)."""
    for _ in range(5):
        try:
            return list(kept.values())
        except RuntimeError:  # changed size during iteration: the page is drawing a chart right now
            continue
    return []
