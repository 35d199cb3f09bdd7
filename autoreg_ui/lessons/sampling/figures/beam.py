"""The beam search tree: every candidate the search looked at, by step, with the greedy path below.

x is the decode step; nodes of one step are stacked under their parents so edges rarely cross.
Kept candidates are coloured by cumulative log-prob, pruned ones grey, finished ones are
diamonds, and the final beams' paths are drawn thick with their rank.
"""
from __future__ import annotations

import html
import itertools

import pandas as pd
import plotly.graph_objects as go

from autoreg_core.experiments.beam_search import FINISHED, KEPT, PRUNED, BeamResult
from autoreg_ui import palette
from autoreg_ui.labels import short_label

PRUNED_COLOR = palette.FADED
BEST_COLOR = palette.HIGHLIGHT
BEAM_COLOR = palette.ACCENT
GREEDY_COLOR = palette.GOOD
NODE_NAMES = {PRUNED: "pruned", KEPT: "kept", FINISHED: "finished (EOS or last step)"}


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
    """The tree: edges (grey pruned, blue kept), the final beams drawn thick, nodes, the greedy track."""
    pos = tree_layout(result)
    fig = go.Figure([*_edge_traces(result, pos), *_beam_traces(result, pos), *_node_traces(result, pos, labels)])
    x0, y0 = pos[0]
    fig.add_trace(go.Scatter(x=[x0], y=[y0], mode="markers+text", text=[short_label(context_label, 16)],
                             textposition="middle left", marker=dict(size=12, color=palette.INK),
                             hovertext=[html.escape(context_label)], hoverinfo="text", showlegend=False))
    if result.greedy_ids:
        fig.add_trace(_greedy_trace(result, labels, min(y for _, y in pos.values()) - 1.5))
    n_layer = max([sum(1 for n in result.nodes if n.step == s) for s in range(1, result.steps + 1)] or [1])
    fig.update_xaxes(title_text="decode step", dtick=1, range=[-0.8, result.steps + 0.6])
    fig.update_yaxes(visible=False)
    fig.update_layout(height=max(380, 34 * n_layer + 200), margin=dict(l=20, r=20, t=30, b=40),
                      legend=dict(orientation="h", y=-0.12), plot_bgcolor="white")
    return fig


def _edge_traces(result: BeamResult, pos) -> list[go.Scatter]:
    traces = []
    for pruned, color, width in ((True, PRUNED_COLOR, 1), (False, palette.SOFT_ACCENT, 1.5)):
        xs, ys = [], []
        for node in result.nodes[1:]:
            if (node.status == PRUNED) == pruned:
                xs += [pos[node.parent][0], pos[node.id][0], None]
                ys += [pos[node.parent][1], pos[node.id][1], None]
        traces.append(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=color, width=width),
                                 hoverinfo="skip", showlegend=False))
    return traces


def _beam_traces(result: BeamResult, pos) -> list[go.Scatter]:
    """Each final beam's path, the best one last so it is drawn on top."""
    traces = []
    for rank, beam in reversed(list(enumerate(result.beams))):
        path = [0] + result.path(beam.node_id)
        traces.append(go.Scatter(x=[pos[n][0] for n in path], y=[pos[n][1] for n in path], mode="lines",
                                 line=dict(color=BEST_COLOR if rank == 0 else BEAM_COLOR,
                                           width=4 if rank == 0 else 2.5),
                                 name=f"beam #{rank + 1}: score {beam.score:.3f}", hoverinfo="skip"))
    return traces


def _node_traces(result: BeamResult, pos, labels: dict[int, str]) -> list[go.Scatter]:
    final_rank: dict[int, int] = {}
    for rank, beam in enumerate(result.beams):
        for nid in result.path(beam.node_id):
            final_rank.setdefault(nid, rank)
    traces = []
    for status, symbol in ((PRUNED, "circle"), (KEPT, "circle"), (FINISHED, "diamond")):
        nodes = [n for n in result.nodes[1:] if n.status == status]
        if not nodes:
            continue
        name_of = [labels.get(n.token_id, str(n.token_id)) for n in nodes]
        hover = [f"{html.escape(name)} (id {n.token_id})<br>step {n.step} · {n.status}<br>log p = {n.logprob:.3f}"
                 f"<br>cumulative log-prob = {n.cum_logprob:.3f}"
                 + (f"<br>score = {n.score:.3f}" if n.score is not None else "")
                 + (f"<br>final beam #{final_rank[n.id] + 1}" if n.id in final_rank else "")
                 for n, name in zip(nodes, name_of)]
        marker = dict(symbol=symbol, size=11 if status != PRUNED else 8, line=dict(width=1, color=palette.INK))
        if status == PRUNED:
            marker["color"] = PRUNED_COLOR
        else:
            marker.update(color=[n.cum_logprob for n in nodes], colorscale="Viridis", cmin=_cmin(result), cmax=0,
                          showscale=status == KEPT, colorbar=dict(title="cum. log-prob", thickness=12))
        traces.append(go.Scatter(x=[pos[n.id][0] for n in nodes], y=[pos[n.id][1] for n in nodes],
                                 mode="markers+text", text=[short_label(name, 10) for name in name_of],
                                 textposition="top center", marker=marker, hovertext=hover, hoverinfo="text",
                                 textfont=dict(size=10, color=palette.MUTED if status == PRUNED else palette.INK),
                                 name=NODE_NAMES[status]))
    return traces


def _greedy_trace(result: BeamResult, labels: dict[int, str], y: float) -> go.Scatter:
    """The greedy path on its own track below the tree."""
    cums = list(itertools.accumulate(result.greedy_logprobs))
    names = [labels.get(t, str(t)) for t in result.greedy_ids]
    x = list(range(len(result.greedy_ids) + 1))
    return go.Scatter(x=x, y=[y] * len(x), mode="lines+markers+text",
                      text=["greedy"] + [short_label(name, 10) for name in names], textposition="bottom center",
                      line=dict(color=GREEDY_COLOR, dash="dash"), marker=dict(size=9, color=GREEDY_COLOR),
                      hovertext=["greedy path"] + [f"{html.escape(name)}<br>cumulative log-prob {c:.3f}"
                                                   for name, c in zip(names, cums)],
                      hoverinfo="text", name=f"greedy: log-prob {cums[-1]:.3f}")


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
                     "sum log-prob": round(lp, 4), "score": round(lp / (n ** result.settings.length_penalty), 4),
                     "ends with EOS": ""})
    return pd.DataFrame(rows)
