"""Figures for the "Step through generation" page, built from small arrays (a top-N, per-step scalars)."""
from __future__ import annotations

import html
import threading
import weakref
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import torch

from autoreg_core.engine.decode import Pipeline
from autoreg_core.engine.session import StepRecord
from autoreg_core.engine.tokens import TokenView, single_token_view, token_views
from autoreg_ui import format, palette

OTHER_LABEL = "all other tokens"


@dataclass(frozen=True)
class TopN:
    """The bars of one distribution chart: ids, most likely first, with their probabilities."""

    ids: list[int]
    before: list[float]  # the model's raw softmax
    after: list[float]  # after temperature / top-k / top-p / min-p (one-hot when greedy)
    chosen: int | None = None


def top_of_record(record: StepRecord, n: int) -> TopN:
    """A past step's bars from what its record keeps (exact for every step, old ones included)."""
    n = max(1, min(n, int(record.top_ids.numel())))
    ids = record.top_ids[:n].tolist()
    before, after = record.top_probs[:n].tolist(), record.top_probs_filtered[:n].tolist()
    if record.token_id not in ids:  # the chosen token ranked lower: show it too
        ids, before, after = ids + [record.token_id], before + [record.prob], after + [record.prob_filtered]
    return TopN(ids, before, after, record.token_id)


def top_of_pipeline(pipeline: Pipeline, n: int) -> TopN:
    """The next token's candidates: the top-n of the raw softmax, with their filtered probabilities."""
    raw, final = pipeline.raw_probs, pipeline.probs
    ids = torch.topk(raw, k=max(1, min(n, raw.shape[-1]))).indices
    return TopN(ids.tolist(), raw[ids].tolist(), final[ids].tolist())


class ViewsMemo:
    """A sequence's token views, extended as it grows instead of decoded whole on every click.

    ``token_views`` decodes the whole sequence through one incremental UTF-8 decoder, so decoding it whole
    on each click would decode every token again (twice: the strip and the chart's title). A view depends only on
    the tokens up to it, and the decoder holds nothing after a plain token whose last byte is ASCII, so
    the views up to the last such token are kept and only the tokens after it are decoded again: the
    result equals ``token_views(tokenizer, ids)`` whole (a test compares them after steps, undo and
    forced UTF-8 pieces).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokenizer, self._ids, self._views = None, (), []
        self.chips: list = []  # the token strip's chips, each with what it was built from (``token_strip_html``)

    def views(self, tokenizer, ids) -> list[TokenView]:
        ids = tuple(int(i) for i in ids)
        with self._lock:
            if tokenizer is self._tokenizer and ids == self._ids:
                return list(self._views)
            keep = 0
            if tokenizer is self._tokenizer:
                same = next((i for i, (a, b) in enumerate(zip(ids, self._ids)) if a != b),
                            min(len(ids), len(self._ids)))
                keep = _restart_point(self._views, same)
            views = self._views[:keep] + token_views(tokenizer, list(ids[keep:]))
            self._tokenizer, self._ids, self._views = tokenizer, ids, views
            return list(views)


def _restart_point(views: list[TokenView], limit: int) -> int:
    """The largest n ≤ ``limit`` after which a fresh decoder is in the state the sequence's decoder was in."""
    for n in range(limit, 0, -1):
        last = views[n - 1]
        if not last.special and last.data and last.data[-1] < 0x80:
            return n
    return 0


_MEMOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session → its ViewsMemo
_MEMOS_LOCK = threading.Lock()


def _memo_of(session) -> ViewsMemo:
    with _MEMOS_LOCK:
        memo = _MEMOS.get(session)
        if memo is None:
            memo = _MEMOS[session] = ViewsMemo()
        return memo


def session_views(session) -> list[TokenView]:
    """``session.views()``, from the session's own ``ViewsMemo`` (forgotten with the session)."""
    return _memo_of(session).views(session.bundle.tokenizer, session.ids)


def strip_memo(session) -> list:
    """The session's chips for ``token_strip_html(..., memo=)`` (forgotten with the session)."""
    return _memo_of(session).chips


def token_strip_html(views: list[TokenView], records: list[StepRecord], prompt_len: int,
                     memo: list | None = None) -> str:
    """The sequence as chips. Every string is escaped: model output is never trusted as HTML.

    Prompt chips are grey and dashed; generated chips are coloured by the raw probability the token
    had when chosen (the nearest of 21 shades on a colour-blind-safe ramp), and an unlikely pick is
    also underlined (forced ones get an outline). A screen reader hears each token with its probability and
    rank: that text is in the chip, visually hidden. ``memo`` (a list kept per session, ``strip_memo``)
    holds each position's chip with everything it was built from, so a click rebuilds only the chips whose
    inputs changed (a long text's strip cost a millisecond and more per click).
    """
    chips = []
    for pos, view in enumerate(views):
        rec = records[pos - prompt_len] if pos >= prompt_len and pos - prompt_len < len(records) else None
        key = (pos, view, None if rec is None else (rec.prob, rec.prob_filtered, rec.rank, rec.logprob, rec.forced))
        if memo is not None and pos < len(memo) and memo[pos][0] == key:
            chips.append(memo[pos][1])
            continue
        chip = _chip(pos, view, rec)
        if memo is not None:
            del memo[pos:]  # what follows a changed chip is rebuilt too (it is usually the end: a step or undo)
            memo.append((key, chip))
        chips.append(chip)
    if memo is not None:
        del memo[len(views):]
    return (STRIP_CSS + '<div class="tokstrip" role="list" aria-label="The text so far, one item per token">'
            + "".join(chips) + "</div>")


def _chip(pos: int, view: TokenView, rec: StepRecord | None) -> str:
    """One token's chip: its class, its tooltip and the words a screen reader hears (``rec``: None for the prompt)."""
    tip = [f"position {pos}", f"id {view.id}", repr(view.piece)]
    spoken = ""
    if rec is None:
        cls = "tok prompt"
        tip.append("prompt")
    else:
        cls = "tok gen unlikely" if rec.prob < palette.UNLIKELY else "tok gen"
        cls += f" p{palette.prob_shade(rec.prob)}"
        tip += [f"p {rec.prob:.4f}", f"{rec.prob_filtered:.4f} filtered", f"rank {rec.rank}",
                f"log-p {rec.logprob:.3f}"]
        spoken = f", probability {format.spoken_percent(rec.prob)}, rank {rec.rank}"
        if rec.forced:
            cls += " forced"
            tip.append("forced")
            spoken += ", forced"
    if view.partial:
        tip.append("part of a UTF-8 character: its other bytes are in the tokens next to it")
    hidden = f'<span class="sr">{html.escape(spoken)}</span>' if spoken else ""
    return (f'<span role="listitem" class="{cls}" title="{html.escape(" · ".join(tip))}">'
            f"{html.escape(view.label)}{hidden}</span>")


# Sent with every strip: its colours are classes (a chip carries `p7`, not an inline style), so a long
# text costs a few dozen bytes per token on each click rather than a few hundred.
STRIP_CSS = ("<style>.tokstrip{line-height:2.1;font-family:ui-monospace,monospace;font-size:0.95rem}"
             f".tokstrip .tok{{padding:2px 4px;margin:1px;border-radius:4px;white-space:pre;color:{palette.TEXT};"
             "display:inline-block}"
             f".tokstrip .prompt{{background:{palette.PROMPT_CHIP};border:1px dashed {palette.MUTED}}}"
             + "".join(f".tokstrip .p{i}{{background:{palette.prob_color(i / palette.PROB_STEPS)}}}"
                       for i in range(palette.PROB_STEPS + 1))
             + f".tokstrip .forced{{outline:2px solid {palette.CUMULATIVE}}}"
             ".tokstrip .unlikely{text-decoration:underline dotted 2px;text-underline-offset:4px}"
             ".tokstrip .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);"
             "white-space:nowrap}</style>")


# A typed text cut into its tokens, as tokenizer playgrounds show it: neighbouring chips in different colours (light
# and darker shades of the strip's own ramp, taken in turn), so where one token ends and the next begins is visible.
CHUNK_SHADES = (3, 12, 6, 16, 9)  # of the strip's 21 shades (its p0 … p20 classes)


def chunks_html(views: list[TokenView]) -> str:
    """The token strip for a text without steps: each chip in the next of ``CHUNK_SHADES`` (escaped like the strip)."""
    chips = []
    for pos, view in enumerate(views):
        tip = html.escape(f"position {pos} · id {view.id} · {view.piece!r}")
        shade = CHUNK_SHADES[pos % len(CHUNK_SHADES)]
        chips.append(f'<span role="listitem" class="tok p{shade}" title="{tip}">{html.escape(view.label)}</span>')
    return (STRIP_CSS + '<div class="tokstrip" role="list" aria-label="The text, one item per token">'
            + "".join(chips) + "</div>")


def unique_labels(tokenizer, ids: list[int]) -> list[str]:
    """Axis labels, one per id, made unique (two tokens may render alike: ' the' and 'the' look close)."""
    seen: set[str] = set()
    out = []
    for tid in ids:
        label = single_token_view(tokenizer, tid).label
        if label in seen:
            label = f"{label} #{tid}"
        seen.add(label)
        out.append(label)
    return out


def unchecked_figure(data: list[dict], layout: dict, frames: list[dict] | None = None) -> go.Figure:
    """A figure from plain dicts without plotly's per-property validation, which was half the CPU of the step
    page's chart on every click (``bench/classroom.py`` profile); ``st.plotly_chart`` serialises it as is.

    Only for dicts already valid: this module's fixed builders (a test rebuilds each one with validation and
    compares the two whole) and ``charts.style``'s copy of a figure, restyled with its own values. Later edits
    (``update_layout``, ``add_trace``) are validated again, as on any figure.
    """
    fig = go.Figure(data=data, layout=layout, frames=frames, _validate=False)
    for part in (fig, fig.layout, *fig.data):
        part._validate = True
    return fig


def topn_figure(tokenizer, top: TopN, title: str = "") -> go.Figure:
    """Top-n of the full-vocabulary softmax, before and after the sampling filters.

    One extra bar holds the mass of every token not shown, so each series adds up to 1. Each bar
    carries its token id as customdata, so a click can force that token. Built in one constructor
    call from plain dicts: plotly's ``add_bar``/``update_layout`` path parsing cost ~4× more per
    click (``bench/click_cost.py``).
    """
    labels = unique_labels(tokenizer, top.ids) + [OTHER_LABEL]
    before = top.before + [max(0.0, 1.0 - sum(top.before))]
    after = top.after + [max(0.0, 1.0 - sum(top.after))]
    custom = top.ids + [-1]
    outline = dict(color=palette.HIGHLIGHT, width=[3 if i == top.chosen else 0 for i in custom])
    bars = [
        dict(type="bar", name="model softmax (before filters)", x=labels, y=before, customdata=custom,
             marker=dict(color=palette.SOFT_ACCENT, line=outline),
             hovertemplate="%{x}<br>id %{customdata}<br>p = %{y:.4f}<extra>before</extra>"),
        dict(type="bar", name="after temperature / top-k / top-p / min-p", x=labels, y=after, customdata=custom,
             marker=dict(color=[palette.HIGHLIGHT if i == top.chosen else palette.ACCENT for i in custom],
                         line=outline),
             hovertemplate="%{x}<br>id %{customdata}<br>p = %{y:.4f}<extra>after</extra>"),
    ]
    layout = dict(barmode="group", title=dict(text=title), yaxis=dict(title=dict(text="probability")),
                  xaxis=dict(title=dict(text="token"), tickangle=-45, type="category"),
                  legend=dict(orientation="h", y=1.12), margin=dict(t=60, b=40, l=50, r=10),
                  height=380, clickmode="event+select")
    return unchecked_figure(bars, layout)


def with_click_area(fig: go.Figure) -> go.Figure:
    """The chart with an invisible full-height bar behind each token's pair, carrying its id: a rare token, whose
    bar is 0–2 px tall, is forced by a click anywhere in its column (``on_select`` reads ``customdata``)."""
    bars = [trace for trace in fig.data if trace.type == "bar" and trace.customdata is not None]
    if not bars:
        return fig
    x, custom = list(bars[0].x), list(bars[0].customdata)
    top = max(max(trace.y) for trace in bars)
    fig.add_trace(go.Bar(x=x, y=[top] * len(x), customdata=custom, width=0.9, offset=-0.45, showlegend=False,
                         marker=dict(color="rgba(0,0,0,0)"), name=CLICK_AREA,
                         hovertemplate="%{x}<br>id %{customdata}<extra>" + CLICK_AREA + "</extra>"))
    fig.data = (fig.data[-1], *fig.data[:-1])  # behind the real bars
    return fig


CLICK_AREA = "click to force"


def logprob_figure(records: list[StepRecord]) -> go.Figure:
    """The chain rule, running: each step adds log p(token | everything before it)."""
    steps = [r.index for r in records]
    logprobs = [r.logprob for r in records]
    running = torch.tensor(logprobs, dtype=torch.float64).cumsum(0).tolist()
    traces = [dict(type="bar", x=steps, y=logprobs, name="log-prob of the step's token",
                   marker=dict(color=palette.SOFT_ACCENT)),
              dict(type="scatter", x=steps, y=running, name="sequence log-prob (running sum)",
                   mode="lines+markers", line=dict(color=palette.ACCENT))]
    layout = dict(height=280, xaxis=dict(title=dict(text="step")), yaxis=dict(title=dict(text="nats")),
                  margin=dict(t=30, b=40, l=50, r=10), legend=dict(orientation="h", y=1.15))
    return unchecked_figure(traces, layout)


HISTORY_COLUMNS = ["step", "token", "piece", "id", "probability", "probability after filters", "rank",
                   "log-prob", "entropy (bits)", "kept after filters", "forced", "cache length", "time (ms)"]


def history_frame(tokenizer, records: list[StepRecord]) -> pd.DataFrame:
    """One row per decode step, as shown in the table and the CSV download."""
    rows = []
    for r in records:
        view = single_token_view(tokenizer, r.token_id)
        rows.append([r.index, view.label, view.piece, r.token_id, round(r.prob, 6), round(r.prob_filtered, 6),
                     r.rank, round(r.logprob, 4), round(r.entropy_bits, 3), r.kept, r.forced, r.cache_len,
                     round(r.time_ms, 1)])
    return pd.DataFrame(rows, columns=HISTORY_COLUMNS)
