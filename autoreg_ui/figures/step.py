"""Figures for the "Step through generation" page: token strip, top-N bars, history table."""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
import torch

from autoreg_core.session import StepRecord
from autoreg_core.tokens import TokenView, single_token_view

BEFORE_COLOR = "#9db4d6"
AFTER_COLOR = "#1f6feb"
CHOSEN_COLOR = "#e8590c"
OTHER_LABEL = "all other tokens"


def prob_color(prob: float) -> str:
    """Chip background: red for unlikely picks through yellow to green for confident ones."""
    hue = int(120 * max(0.0, min(1.0, prob)))
    return f"hsl({hue}, 75%, 82%)"


def token_strip_html(views: list[TokenView], records: list[StepRecord], prompt_len: int) -> str:
    """The sequence as chips. Every string is escaped: model output is never trusted as HTML.

    Prompt chips are grey and dashed; generated chips are coloured by the probability the token had
    when chosen (forced ones get a thick outline).
    """
    chips = []
    for pos, view in enumerate(views):
        label = html.escape(view.label)
        tip = [f"position {pos}", f"id {view.id}", f"piece {view.piece!r}"]
        if pos < prompt_len:
            style = "background:#eceff3; border:1px dashed #98a2b3;"
            cls = "tok prompt"
            tip.append("prompt token")
        else:
            rec = records[pos - prompt_len] if pos - prompt_len < len(records) else None
            prob = rec.prob if rec else 0.0
            style = f"background:{prob_color(prob)};"
            if rec is not None:
                tip += [f"probability {rec.prob:.4f}", f"rank {rec.rank}", f"log-prob {rec.logprob:.3f}"]
                if rec.forced:
                    style += " outline: 2px solid #5c2d91;"
                    tip.append("forced")
            cls = "tok gen"
        if view.partial:
            tip.append("half of a UTF-8 character: the rest comes in the next token")
        chips.append(f'<span class="{cls}" style="{style}" title="{html.escape(" · ".join(tip))}">{label}</span>')
    css = ("<style>.tokstrip{line-height:2.1;font-family:ui-monospace,monospace;font-size:0.95rem}"
           ".tokstrip .tok{padding:2px 4px;margin:1px;border-radius:4px;white-space:pre;"
           "display:inline-block}</style>")
    return css + '<div class="tokstrip">' + "".join(chips) + "</div>"


def _labels(tokenizer, ids: list[int]) -> list[str]:
    """Unique x-axis labels (two tokens may render alike, e.g. ' the' and 'the' look close)."""
    seen: dict[str, int] = {}
    out = []
    for tid in ids:
        label = single_token_view(tokenizer, tid).label
        if label in seen:
            label = f"{label} #{tid}"
        seen[label] = tid
        out.append(label)
    return out


def top_ids_for_chart(probs_before: torch.Tensor, chosen: int | None, n: int) -> list[int]:
    """The top-n tokens of the model's distribution, plus the chosen one if it ranked lower."""
    ids = torch.topk(probs_before, k=min(n, probs_before.shape[-1])).indices.tolist()
    if chosen is not None and chosen not in ids:
        ids.append(int(chosen))
    return ids


def topn_figure(tokenizer, probs_before: torch.Tensor, probs_after: torch.Tensor, chosen: int | None,
                n: int = 15, title: str = "") -> go.Figure:
    """Top-n of the full-vocabulary softmax, before and after the sampling filters.

    One extra bar holds the mass of every token not shown, so the bars add up to 1. Each bar
    carries its token id as customdata, so a click can force that token.
    """
    ids = top_ids_for_chart(probs_before, chosen, n)
    labels = _labels(tokenizer, ids)
    before = [float(probs_before[i]) for i in ids]
    after = [float(probs_after[i]) for i in ids]
    labels.append(OTHER_LABEL)
    before.append(max(0.0, 1.0 - sum(before)))
    after.append(max(0.0, 1.0 - sum(after)))
    custom = ids + [-1]
    line_w = [3 if i == chosen else 0 for i in custom]
    fig = go.Figure()
    fig.add_bar(name="model softmax (before filters)", x=labels, y=before, customdata=custom,
                marker=dict(color=BEFORE_COLOR, line=dict(color=CHOSEN_COLOR, width=line_w)),
                hovertemplate="%{x}<br>id %{customdata}<br>p = %{y:.4f}<extra>before</extra>")
    fig.add_bar(name="after temperature / top-k / top-p / min-p", x=labels, y=after, customdata=custom,
                marker=dict(color=[CHOSEN_COLOR if i == chosen else AFTER_COLOR for i in custom],
                            line=dict(color=CHOSEN_COLOR, width=line_w)),
                hovertemplate="%{x}<br>id %{customdata}<br>p = %{y:.4f}<extra>after</extra>")
    fig.update_layout(barmode="group", title=title, yaxis_title="probability", xaxis_title="token",
                      legend=dict(orientation="h", y=1.12), margin=dict(t=60, b=40, l=50, r=10),
                      height=380, clickmode="event+select")
    fig.update_xaxes(tickangle=-45, type="category")
    return fig


def logprob_figure(records: list[StepRecord]) -> go.Figure:
    """The chain rule, running: each step adds log p(token | everything before it)."""
    steps = [r.index for r in records]
    running, total = [], 0.0
    for r in records:
        total += r.logprob
        running.append(total)
    fig = go.Figure()
    fig.add_bar(x=steps, y=[r.logprob for r in records], name="log-prob of the step's token",
                marker_color=BEFORE_COLOR)
    fig.add_scatter(x=steps, y=running, name="sequence log-prob (running sum)", mode="lines+markers",
                    line=dict(color=AFTER_COLOR))
    fig.update_layout(height=280, xaxis_title="step", yaxis_title="nats", margin=dict(t=30, b=40, l=50, r=10),
                      legend=dict(orientation="h", y=1.15))
    return fig


def history_frame(tokenizer, records: list[StepRecord]) -> pd.DataFrame:
    """One row per decode step, as shown in the table and the CSV download."""
    rows = []
    for r in records:
        view = single_token_view(tokenizer, r.token_id)
        rows.append({
            "step": r.index,
            "token": view.label,
            "piece": view.piece,
            "id": r.token_id,
            "probability": round(r.prob, 6),
            "rank": r.rank,
            "log-prob": round(r.logprob, 4),
            "entropy (bits)": round(r.entropy_bits, 3),
            "kept after filters": r.kept,
            "forced": r.forced,
            "cache length": r.cache_len,
            "time (ms)": round(r.time_ms, 1),
        })
    return pd.DataFrame(rows, columns=["step", "token", "piece", "id", "probability", "rank", "log-prob",
                                       "entropy (bits)", "kept after filters", "forced",
                                       "cache length", "time (ms)"])

