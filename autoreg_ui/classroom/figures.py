"""Class mode's charts: the class's guesses next to the model's probabilities, and the class's draws as a tree."""
from __future__ import annotations

import html
from dataclasses import dataclass

import plotly.graph_objects as go

from autoreg_core.experiments.continuation_tree import ROOT, Branch
from autoreg_ui import palette


@dataclass(frozen=True)
class RevealBars:
    labels: list[str]  # one per token: every guessed token and the model's top few
    class_share: list[float]  # fraction of the guesses that were this token
    model_prob: list[float]  # the model's raw probability of this token


def reveal_bars(guessed: list[int], top_ids: list[int], prob_of, label_of) -> RevealBars:
    """Bars for the guessed tokens (most guessed first) and the model's top tokens not guessed."""
    counts: dict[int, int] = {}
    for tid in guessed:
        counts[tid] = counts.get(tid, 0) + 1
    order = sorted(counts, key=lambda t: (-counts[t], -prob_of(t)))
    order += [t for t in top_ids if t not in counts]
    n = max(1, len(guessed))
    return RevealBars([label_of(t) for t in order], [counts.get(t, 0) / n for t in order],
                      [prob_of(t) for t in order])


def reveal_figure(bars: RevealBars, title: str, class_name: str, model_name: str) -> go.Figure:
    return go.Figure(
        data=[dict(type="bar", name=class_name, x=bars.labels, y=bars.class_share,
                   marker=dict(color=palette.HIGHLIGHT)),
              dict(type="bar", name=model_name, x=bars.labels, y=bars.model_prob, marker=dict(color=palette.ACCENT))],
        layout=dict(title=dict(text=title), barmode="group", yaxis=dict(title=dict(text="probability"), range=[0, 1]),
                    xaxis=dict(title=dict(text="token"), type="category"), height=360,
                    margin=dict(l=50, r=20, t=60, b=60)))


def tree_figure(branches: list[Branch], draws: int, label_of, title: str, root_label: str) -> go.Figure:
    """The class's draws as an icicle, read left to right: each box a token after the boxes to its left, its
    width the share of students whose draw went that way (the count is written in the box)."""
    root = "root"
    ids = [root] + [f"n{b.id}" for b in branches]
    parents = [""] + [f"n{b.parent}" if b.parent != ROOT else root for b in branches]
    labels = [f"{root_label} · {draws}"] + [f"{label_of(b.token)} · {b.count}" for b in branches]
    values = [draws] + [b.count for b in branches]
    shades = [palette.MUTED] + [palette.prob_color(b.count / max(1, draws)) for b in branches]
    return go.Figure(
        data=[dict(type="icicle", ids=ids, parents=parents, labels=labels, values=values, branchvalues="total",
                   tiling=dict(orientation="h"), marker=dict(colors=shades, line=dict(color=palette.INK, width=1)),
                   textfont=dict(color=palette.TEXT), hovertemplate="%{label}<br>%{percentRoot:.0%} of the class"
                   "<extra></extra>", maxdepth=-1)],
        layout=dict(title=dict(text=title), height=max(320, 46 * min(12, max(1, len(branches)))),
                    margin=dict(l=10, r=10, t=60, b=10)))


class SharedFigure(go.Figure):
    """A finished figure that many tabs draw as it is (the class's last step: the same for every follower).

    ``st.plotly_chart`` serialises ``to_dict()``, which on a plain figure deep-copies every property on every
    draw (14% of a follower's update, ``bench/class_follow.py --profile``). Here the dict is made once
    (``shared``) and each call hands out fresh top-level and per-trace containers around it (plotly's JSON
    writer drops each trace's ``uid`` in place; nothing else changes it). The figure must not be edited after
    ``shared``: an edit would not reach that dict, and two followers' script threads editing it at once break
    plotly's dicts mid-iteration. So it lays itself out, ``charts.framed`` leaves a ``finished`` figure as it is
    and ``charts.style`` edits a copy.
    """

    finished = True

    def to_dict(self) -> dict:
        frozen = self.__dict__.get("_frozen")
        if frozen is None:
            return super().to_dict()
        out = {"data": [dict(trace) for trace in frozen["data"]], "layout": frozen["layout"]}
        if "frames" in frozen:
            out["frames"] = frozen["frames"]
        return out


def shared(fig: go.Figure) -> SharedFigure:
    """``fig`` as a ``SharedFigure``: copied once (with plotly's validation) and its dict made once, from ``fig``
    itself (the copy's dict holds the same, its keys in another order: the JSON would differ as text)."""
    out = SharedFigure(fig)
    out._frozen = fig.to_dict()
    return out


CHIP_STYLE = ("display:inline-block;margin:0 .25rem .25rem 0;padding:.1rem .45rem;border-radius:.35rem;"
              "border:1px solid rgba(128,128,128,.55);font-family:ui-monospace,monospace;white-space:pre")


def token_chips_html(labels: list[str]) -> str:
    """A student's draw as token chips: each label escaped (a drawn token is model output, never markup), its
    whitespace already made visible (a newline reads ↵), so one token cannot break the line or the page."""
    chips = "".join(f'<span style="{CHIP_STYLE}">{html.escape(label)}</span>' for label in labels)
    return f'<div class="class-draw">{chips}</div>'
