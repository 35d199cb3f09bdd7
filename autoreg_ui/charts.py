"""Every chart goes through ``show_chart``: presenter styling, PNG/SVG buttons, and a place in the hand-out.

``style`` is pure (a figure in, a restyled copy out) so tests check it without Streamlit. The export
buttons run in the browser: plotly.js, already loaded to draw the chart, writes the PNG or SVG of the
chart as it is on screen (no image server, no extra package). The script behind them is installed once
per page run (``install_export_script``, from app.py); each chart adds only two plain buttons. A copy of
the script per chart cost the browser about 100 ms per chart per click (``bench/click_cost.py``).
"""
from __future__ import annotations

import html
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


def install_export_script() -> None:
    """The one click handler (and style) behind every chart's PNG/SVG buttons; call once per page run."""
    st.html(EXPORT_JS, unsafe_allow_javascript=True)


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
    shown = style(fig, large=presenter.active(), dark=presenter.dark())
    event = box.plotly_chart(shown, key=key, config=chart_config(name), **plotly_kwargs)
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
