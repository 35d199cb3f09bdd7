"""Every number a chart draws, as a table: what a screen reader or a spreadsheet reads instead of the picture
(``charts.show_chart`` shows it under a chart when asked)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go


def title_text(title) -> str | None:
    """A title's text, whether plotly holds it as a dict or (from a hand-built dict) as a plain string."""
    return title.get("text") if isinstance(title, dict) else title


def axis_title(axis) -> str | None:
    """An axis's title text, from a plotly axis or its dict; None when it has none."""
    if isinstance(axis, dict) or axis is None:
        return title_text((axis or {}).get("title")) or None
    return axis.title.text if axis.title is not None and axis.title.text else None


def _values(seq) -> list:
    """A trace's x, y or z as a plain list (plotly keeps tuples, lists or numpy arrays)."""
    return np.asarray(seq).tolist() if seq is not None else []


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
    x_name = axis_title(fig.layout.xaxis) or "x"
    y_name = axis_title(fig.layout.yaxis) or "y"
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
