"""Token labels on charts: cut short and escaped, because plotly reads tick and hover text as HTML."""
from __future__ import annotations

import html


def short_label(label: str, n: int = 12) -> str:
    """``label`` cut to ``n`` characters (an ellipsis marks the cut) and HTML-escaped."""
    label = label if len(label) <= n else label[: n - 1] + "…"
    return html.escape(label, quote=False)


def escaped(labels: list[str]) -> list[str]:
    """Whole labels, escaped, for hover text."""
    return [html.escape(label, quote=False) for label in labels]
