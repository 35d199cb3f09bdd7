"""The tokens page's chart: tokens for the same sentence by script, against English's."""
from __future__ import annotations

import plotly.graph_objects as go

from autoreg_ui import palette
from autoreg_ui.lessons.tokens.text import BASELINE, ranked_scripts, versus_baseline


def scripts_figure(rows) -> go.Figure:
    """Bars of tokens for the same sentence relative to English's (``rows``: ``tokens.ScriptCount``), cheapest
    first, the count on each bar and tokens per character in the hover."""
    ranked = ranked_scripts(rows)
    fig = go.Figure(go.Bar(x=[r.name for r in ranked], y=[versus_baseline(r, rows) for r in ranked],
                           marker_color=palette.ACCENT, text=[f"{r.tokens} tokens" for r in ranked],
                           textposition="outside", customdata=[r.tokens_per_character for r in ranked],
                           hovertemplate=(f"%{{x}}: %{{y:.2f}}× {BASELINE}'s tokens for the same sentence "
                                          "(%{customdata:.2f} tokens per character)<extra></extra>")))
    fig.update_layout(height=320, margin=dict(t=30, b=40),
                      yaxis=dict(title=dict(text=f"tokens for the same sentence, × {BASELINE}")),
                      showlegend=False)
    return fig
