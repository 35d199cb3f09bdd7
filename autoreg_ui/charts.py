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

import plotly.graph_objects as go
import streamlit as st

from autoreg_ui import charts_text, keys
from autoreg_ui.chart_table import axis_title, figure_table, title_text
from autoreg_ui.sharing import presenter
from autoreg_ui.step_figures import unchecked_figure

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
    clearing, so a dark page copies nothing else. The copy is edited as plain dicts and built without plotly's
    validation (``unchecked_figure``): plotly's copy and update calls cost a presenter's click about 20 ms per
    chart (``bench/click_cost.py``).
    """
    dark = dark and bool(fig.layout.plot_bgcolor or fig.layout.paper_bgcolor)
    if not (large or dark):
        return fig
    spec = go.Figure.to_dict(fig)  # plotly's deep copy (a shared figure's own to_dict hands out its one dict)
    layout = spec.setdefault("layout", {})

    def update(part: dict, key: str, **values) -> None:
        part[key] = _merged(part.get(key), values)
    if large:
        sizes = dict(font=LARGE["font"], title=LARGE["title"], legend=LARGE["legend"], hoverlabel=LARGE["hover"])
        for key, size in sizes.items():
            if key == "font":
                update(layout, "font", size=size)
            else:
                update(layout, key, font=dict(size=size))
        for key in _axis_keys(layout):
            update(layout, key, tickfont=dict(size=LARGE["ticks"]), title=dict(font=dict(size=LARGE["axis_title"])))
        for note in layout.get("annotations") or ():
            note["font"] = _merged(note.get("font"), dict(size=LARGE["annotations"]))
        for trace, data in zip(fig.data, spec.get("data") or ()):
            if "textfont" in trace:  # a property of this kind of trace (set or not)
                update(data, "textfont", size=LARGE["text"])
            if "colorbar" in trace:
                update(data, "colorbar", tickfont=dict(size=LARGE["ticks"]))
        if layout.get("height"):
            layout["height"] = int(layout["height"] * HEIGHT_GROWTH)
    if dark:
        layout.update(paper_bgcolor=TRANSPARENT, plot_bgcolor=TRANSPARENT)
    return unchecked_figure(spec.get("data") or [], layout, spec.get("frames"))


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


def _legend_entries(fig: go.Figure, layout: dict) -> list[str]:
    """The names the legend shows: traces with a name that are not hidden from it (one entry per legend group)."""
    if layout.get("showlegend") is False:
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
    return names if len(names) > 1 or layout.get("showlegend") else []


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


_AXIS_KEY = re.compile(r"^[xy]axis\d*$")


def _merged(old, new: dict) -> dict:
    """``new`` laid over ``old`` key by key, as plotly's ``update`` merges (a None removes the key)."""
    out = dict(old) if isinstance(old, dict) else {}
    for key, value in new.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _write_layout(fig: go.Figure, values: dict) -> None:
    """Replace these top-level layout properties whole, without plotly's update machinery: each ``update_layout``
    call (relayout callbacks, path checks, validation) cost the step page about 6 ms of every click's CPU
    (``bench/click_cost.py``). The values are this module's own, merged into what the figure held."""
    layout = fig.layout
    layout._validate = False
    try:
        for key, value in values.items():
            if _AXIS_KEY.match(key) and key[-1].isdigit():
                layout._validate = True  # a subplot's axis (xaxis2): plotly's own path, which registers it
                layout[key] = value
                layout._validate = False
            else:
                layout[key] = value
    finally:
        layout._validate = True


def framed(fig: go.Figure, *, large: bool = False) -> tuple[go.Figure, str]:
    """The figure under the one layout rule, and the details its title had after its first line (a caption).

    Changes ``fig`` in place (only its layout) and returns it, except a figure marked ``finished``: many tabs
    draw it at once, and two script threads editing it break plotly's dicts mid-iteration. A legend the figure
    placed in container coordinates (at its foot, under subplot titles) stays where it is: it is already clear
    of the plot. The rule reads and writes the layout as plain dicts (``_write_layout``).
    """
    if getattr(fig, "finished", False):  # laid out when it was made and never edited after
        meta = fig.layout.meta
        return fig, meta.get("details", "") if isinstance(meta, dict) else ""
    layout = fig.layout.to_plotly_json()
    changed: dict = {}

    def update(**values) -> None:
        for key, value in values.items():
            layout[key] = changed[key] = _merged(layout.get(key), value) if isinstance(value, dict) else value

    title, details = split_title(title_text(layout.get("title")))
    if details:  # kept with the figure: a figure drawn again (cached, or the hand-out's copy) keeps its caption
        update(meta=dict(details=details))
    elif isinstance(layout.get("meta"), dict):
        details = layout["meta"].get("details", "")
    title_px = LARGE["title"] if large else NORMAL_TYPE["title"]
    legend_px = LARGE["legend"] if large else NORMAL_TYPE["legend"]
    top = TOP_PAD_PX
    if title:
        update(title=dict(text=title, x=0, xref="paper", xanchor="left", yref="container", y=1, yanchor="top",
                          pad=dict(t=TOP_PAD_PX), automargin=False))
        top += int(title_px * 1.45)
    names = _legend_entries(fig, layout)
    legend = layout.get("legend") or {}
    at_foot = legend.get("yref") == "container" and legend.get("y") is not None and legend["y"] < 0.5
    legend_at = top if names and not at_foot else None
    if legend_at is not None:
        rows = legend_rows(names, legend_px, LEGEND_WIDTH_PX["large" if large else "normal"])
        top += int(rows * legend_px * 1.75) + 4
    top += _subplot_title_room(layout, legend_px) + _top_axis_room(layout, large)
    needed = _height_for_plot(layout, max(top, 20), large)
    if needed is not None:
        update(height=needed)
    if legend_at is not None:  # placed in px from the top of the (perhaps grown) figure
        update(legend=dict(orientation="h", xref="paper", x=0, xanchor="left", yref="container",
                           y=1 - legend_at / (layout.get("height") or DEFAULT_HEIGHT), yanchor="top", title=None))
    margin = layout.get("margin") or {}
    update(margin=dict(t=max(top, 20), l=_or(margin.get("l"), 10), r=_or(margin.get("r"), 10),
                       b=_or(margin.get("b"), 10)))
    for key in _axis_keys(layout):
        axis = layout.get(key) or {}
        angle = axis.get("tickangle")
        turned = angle is not None and angle not in (0, 90, -90) and axis.get("side") != "top"
        # plotly's own choice when turned: horizontal when the labels fit, turned when they would collide
        update(**{key: dict(automargin=True, tickangle=None if turned else angle)})
    _write_layout(fig, changed)
    return fig, details


def _axis_keys(layout: dict) -> list[str]:
    """Every axis of the layout, as plotly's ``select_xaxes``/``select_yaxes`` give them: the first x and y axes
    always (a figure without one still takes the setting), then each subplot's."""
    return sorted({"xaxis", "yaxis", *(key for key in layout if _AXIS_KEY.match(key))})


def _or(value, default):
    return value if value is not None else default


def _height_for_plot(layout: dict, top: int, large: bool) -> int | None:
    """The height a figure needs when the title and legend above its plot would squeeze it (None: it fits): its
    plot keeps room for its y axis's title (centred on the plot: a longer title is cut by the chart's edge) and,
    outside presenter mode, ``MIN_PLOT_SHARE`` of the height the figure asked for: a legend of many entries
    makes the chart taller instead. On a projector the first screen is the limit (a lesson stop's chart must end
    above 720 px), so there only the y title grows it."""
    size = "large" if large else "normal"
    asked = layout.get("height") or DEFAULT_HEIGHT
    bottom = ((layout.get("margin") or {}).get("b") or 0) + TICK_PX[size] * 1.6 + (
        AXIS_TITLE_PX[size] * 1.6 if axis_title(layout.get("xaxis")) else 0)
    y_title = axis_title(layout.get("yaxis")) or ""
    # the y title is centred on the plot and may reach into the margins above and below it, not past the edge
    title_room = len(y_title) * CHAR_WIDTH * AXIS_TITLE_PX[size] + 12 - 2 * min(top, bottom)
    plot = title_room if large else max(asked * MIN_PLOT_SHARE, title_room)
    needed = int(top + bottom + plot)
    return needed if needed > asked else None


def _top_axis_room(layout: dict, large: bool) -> int:
    """Room for an x axis drawn above the plot (its tick labels, turned as the figure says, and its title): plotly
    grows the top margin for the axis or for the title, not for both, so the rule adds the axis's share itself."""
    room = 0
    for key, axis in layout.items():
        if not (_AXIS_KEY.match(key) and key[0] == "x" and isinstance(axis, dict)):
            continue
        if axis.get("side") != "top" or axis.get("showticklabels") is False:
            continue
        tick_px = (axis.get("tickfont") or {}).get("size") or (LARGE["ticks"] if large else 12)
        longest = max((len(str(t)) for t in axis.get("ticktext") or ()), default=4)
        angle = axis.get("tickangle")
        turned = abs(math.sin(math.radians(angle))) if isinstance(angle, (int, float)) else 0.0
        title_px = (LARGE["axis_title"] if large else 14) * 1.6 if axis_title(axis) else 0
        room = max(room, int(tick_px * 1.5 + longest * CHAR_WIDTH * tick_px * turned + title_px + 6))
    return room


def _subplot_title_room(layout: dict, font_px: int) -> int:
    """Room for annotations that sit on top of the plot area (subplot titles), so the legend stays above them."""
    above = [a for a in layout.get("annotations") or () if a.get("yref") == "paper" and a.get("y") is not None
             and a["y"] >= 1 and a.get("yanchor") == "bottom"]
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
