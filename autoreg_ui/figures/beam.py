"""The beam search tree: every candidate the search looked at, by step, with the greedy path below.

x is the decode step; nodes of one step are stacked under their parents so edges rarely cross.
Kept candidates are coloured by cumulative log-prob, pruned ones grey, finished ones are
diamonds, and the final beams' paths are drawn thick with their rank.
"""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from autoreg_core.beam import FINISHED, KEPT, PRUNED, BeamResult
from .sampling import short_label

PRUNED_COLOR = "#c9d1d9"
BEST_COLOR = "#e8590c"
BEAM_COLOR = "#1f6feb"
GREEDY_COLOR = "#1a7f37"


def tree_layout(result: BeamResult) -> dict[int, tuple[float, float]]:
    """(x, y) per node id: x = step; y = order within the step, sorted by the parent's y then rank."""
    pos: dict[int, tuple[float, float]] = {0: (0.0, 0.0)}
    by_step: dict[int, list] = {}
    for node in result.nodes[1:]:
        by_step.setdefault(node.step, []).append(node)
    for step in sorted(by_step):
        layer = sorted(by_step[step], key=lambda n: (pos[n.parent][1], n.rank))
        m = len(layer)
        for i, node in enumerate(layer):
            pos[node.id] = (float(step), (m - 1) / 2.0 - i)
    # the root sits level with its children
    first = [pos[n.id][1] for n in by_step.get(1, [])]
    if first:
        pos[0] = (0.0, sum(first) / len(first))
    return pos


def beam_tree_figure(result: BeamResult, labels: dict[int, str], context_label: str = "context") -> go.Figure:
    pos = tree_layout(result)
    final_rank = {}
    for rank, beam in enumerate(result.beams):
        for nid in result.path(beam.node_id):
            final_rank.setdefault(nid, rank)
    fig = go.Figure()
    # edges: grey for pruned, blue for kept, thick for the final beams
    for style, color, width in (("pruned", PRUNED_COLOR, 1), ("kept", "#9db4d6", 1.5)):
        xs, ys = [], []
        for node in result.nodes[1:]:
            is_pruned = node.status == PRUNED
            if (style == "pruned") != is_pruned:
                continue
            x0, y0 = pos[node.parent]
            x1, y1 = pos[node.id]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=color, width=width),
                                 hoverinfo="skip", showlegend=False))
    for rank, beam in reversed(list(enumerate(result.beams))):
        path = [0] + result.path(beam.node_id)
        fig.add_trace(go.Scatter(x=[pos[n][0] for n in path], y=[pos[n][1] for n in path], mode="lines",
                                 line=dict(color=BEST_COLOR if rank == 0 else BEAM_COLOR, width=4 if rank == 0 else 2.5),
                                 name=f"beam #{rank + 1}: score {beam.score:.3f}", hoverinfo="skip",
                                 showlegend=True))
    # nodes
    for status, symbol in ((PRUNED, "circle"), (KEPT, "circle"), (FINISHED, "diamond")):
        nodes = [n for n in result.nodes[1:] if n.status == status]
        if not nodes:
            continue
        text = [short_label(labels.get(n.token_id, str(n.token_id)), 10) for n in nodes]
        hover = [f"{html.escape(labels.get(n.token_id, str(n.token_id)))} (id {n.token_id})<br>step {n.step} · "
                 f"{n.status}<br>log p = {n.logprob:.3f}<br>cumulative log-prob = {n.cum_logprob:.3f}"
                 + (f"<br>score = {n.score:.3f}" if n.score is not None else "")
                 + (f"<br>final beam #{final_rank[n.id] + 1}" if n.id in final_rank else "")
                 for n in nodes]
        marker = dict(symbol=symbol, size=11 if status != PRUNED else 8, line=dict(width=1, color="#57606a"))
        if status == PRUNED:
            marker["color"] = PRUNED_COLOR
        else:
            marker.update(color=[n.cum_logprob for n in nodes], colorscale="Viridis", cmin=_cmin(result), cmax=0,
                          showscale=status == KEPT, colorbar=dict(title="cum. log-prob", thickness=12))
        fig.add_trace(go.Scatter(x=[pos[n.id][0] for n in nodes], y=[pos[n.id][1] for n in nodes],
                                 mode="markers+text", text=text, textposition="top center",
                                 textfont=dict(size=10, color="#8c959f" if status == PRUNED else "#24292f"),
                                 marker=marker, hovertext=hover, hoverinfo="text",
                                 name={PRUNED: "pruned", KEPT: "kept", FINISHED: "finished (EOS or last step)"}[status]))
    x0, y0 = pos[0]
    fig.add_trace(go.Scatter(x=[x0], y=[y0], mode="markers+text", text=[short_label(context_label, 16)],
                             textposition="middle left", marker=dict(size=12, color="#24292f"),
                             hovertext=[html.escape(context_label)], hoverinfo="text", showlegend=False))
    # the greedy path on its own track below the tree
    if result.greedy_ids:
        ys = [pos[n.id][1] for n in result.nodes]
        gy = min(ys) - 1.5
        cum, cums = 0.0, []
        for lp in result.greedy_logprobs:
            cum += lp
            cums.append(cum)
        gx = list(range(0, len(result.greedy_ids) + 1))
        fig.add_trace(go.Scatter(x=gx, y=[gy] * len(gx), mode="lines+markers+text",
                                 text=["greedy"] + [short_label(labels.get(t, str(t)), 10) for t in result.greedy_ids],
                                 textposition="bottom center", line=dict(color=GREEDY_COLOR, dash="dash"),
                                 marker=dict(size=9, color=GREEDY_COLOR),
                                 hovertext=["greedy path"] + [f"{html.escape(labels.get(t, str(t)))}<br>cumulative "
                                                              f"log-prob {c:.3f}" for t, c in zip(result.greedy_ids, cums)],
                                 hoverinfo="text",
                                 name=f"greedy: log-prob {cums[-1]:.3f}" if cums else "greedy"))
    n_layer = max([sum(1 for n in result.nodes if n.step == s) for s in range(1, result.steps + 1)] or [1])
    fig.update_xaxes(title_text="decode step", dtick=1, range=[-0.8, result.steps + 0.6])
    fig.update_yaxes(visible=False)
    fig.update_layout(height=max(380, 34 * n_layer + 200), margin=dict(l=20, r=20, t=30, b=40),
                      legend=dict(orientation="h", y=-0.12), plot_bgcolor="white")
    return fig


def _cmin(result: BeamResult) -> float:
    vals = [n.cum_logprob for n in result.nodes[1:] if n.status != PRUNED]
    return min(vals) if vals else -1.0


def beams_frame(result: BeamResult, text_of) -> pd.DataFrame:
    """The final beams ranked, plus the greedy path as the last row, as a table."""
    rows = []
    for rank, beam in enumerate(result.beams):
        rows.append({"rank": f"#{rank + 1}", "text": text_of(beam.token_ids), "tokens": beam.length,
                     "sum log-prob": round(beam.cum_logprob, 4), "score": round(beam.score, 4),
                     "ends with EOS": "yes" if beam.ends_with_eos else "no"})
    if result.greedy_ids:
        lp = sum(result.greedy_logprobs)
        n = len(result.greedy_ids)
        rows.append({"rank": "greedy", "text": text_of(result.greedy_ids), "tokens": n,
                     "sum log-prob": round(lp, 4), "score": round(lp / (n ** result.length_penalty), 4),
                     "ends with EOS": ""})
    return pd.DataFrame(rows)
