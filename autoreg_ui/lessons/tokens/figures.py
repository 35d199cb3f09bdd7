"""The tokens page's chart: tokens per character by script."""
from __future__ import annotations

import plotly.graph_objects as go

from autoreg_ui import palette


def scripts_figure(rows) -> go.Figure:
    """Bars of tokens per character (``rows``: ``tokens.ScriptCount``), the count on each bar."""
    fig = go.Figure(go.Bar(x=[r.name for r in rows], y=[r.tokens_per_character for r in rows],
                           marker_color=palette.ACCENT, text=[f"{r.tokens} tokens" for r in rows],
                           textposition="outside",
                           hovertemplate="%{x}: %{y:.2f} tokens per character<extra></extra>"))
    fig.update_layout(height=320, margin=dict(t=30, b=40), yaxis=dict(title=dict(text="tokens per character")),
                      showlegend=False)
    return fig
