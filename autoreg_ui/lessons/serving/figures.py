"""Figures for the serving page: the batching curve, the slot timelines, speculative rounds, the bit dial."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import precision
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments.speculative_decoding import Speculated
from autoreg_ui import palette

MIB = 2**20
KIND_COLORS = {scheduler.PREFILL: palette.HIGHLIGHT, scheduler.DECODE: palette.ACCENT,
               scheduler.WAITING: palette.FADED}
POLICY_COLORS = {scheduler.STATIC: palette.MUTED, scheduler.CONTINUOUS: palette.ACCENT}


# The legend under the plot, at the foot of the figure (container coordinates): above the plot it was drawn
# through the subplot titles. plotly reserves the room a container-placed legend needs, in any type size; the
# bottom margin under it keeps the axis titles clear of the tick numbers.
LEGEND = dict(orientation="h", yref="container", y=0.0, yanchor="bottom", xanchor="left", x=0.0)
LEGEND_ROOM = 50  # px added to the figure for the legend under the plot


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    fig.update_layout(title=title, height=height + LEGEND_ROOM, margin=dict(l=60, r=40, t=70, b=50 + LEGEND_ROOM),
                      legend=LEGEND)
    return fig


# ---------------------------------------------------------------- 1 · batching
def batching_figure(sweep: batching.BatchSweep, spec: ModelSpec, bandwidth: float | None,
                    peak: float | None = None) -> go.Figure:
    """Step time against batch size (with the floors set by the bytes and by the FLOPs), and the tokens per
    second it gives."""
    sizes = [p.batch for p in sweep.points]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("ms per decode step", "tokens per second (all rows)"))
    fig.add_trace(go.Scatter(x=sizes, y=[p.step_ms for p in sweep.points], mode="lines+markers", name="measured step",
                             line=dict(color=palette.ACCENT), hovertemplate="B=%{x}: %{y:.1f} ms<extra></extra>"),
                  row=1, col=1)
    if bandwidth:
        fig.add_trace(go.Scatter(x=sizes, y=[batching.floor_ms(spec, b, sweep.context, bandwidth) for b in sizes],
                                 mode="lines", name="bytes ÷ measured bandwidth (floor)",
                                 line=dict(color=palette.INK, dash="dash"),
                                 hovertemplate="floor %{y:.1f} ms<extra></extra>"), row=1, col=1)
    if peak:
        fig.add_trace(go.Scatter(x=sizes, y=[batching.compute_ms(spec, b, sweep.context, peak) for b in sizes],
                                 mode="lines", name="FLOPs ÷ measured matmul peak",
                                 line=dict(color=palette.CUMULATIVE, dash="dot"),
                                 hovertemplate="FLOPs alone %{y:.1f} ms<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=sizes, y=[p.tokens_per_s for p in sweep.points], mode="lines+markers", name="tokens/s",
                             line=dict(color=palette.HIGHLIGHT),
                             hovertemplate="B=%{x}: %{y:.0f} tokens/s<extra></extra>"),
                  row=1, col=2)
    fig.update_xaxes(title="batch size B (rows decoded together)")
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, f"One decode step with a {sweep.context}-token context per row, measured")


def bytes_figure(spec: ModelSpec, sizes: list[int], context: int) -> go.Figure:
    """What a batched step reads: the weights once, each row's KV cache on top."""
    reads = [spec.step_bytes(context, b) for b in sizes]
    labels = [str(b) for b in sizes]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=[r["weights"] / MIB for r in reads], name="weights (read once per step)",
                         marker_color=palette.INK, hovertemplate="weights %{y:.1f} MiB<extra></extra>"))
    fig.add_trace(go.Bar(x=labels, y=[r["cache"] / MIB for r in reads], name="KV cache (one per row)",
                         marker_color=palette.ACCENT, hovertemplate="KV cache %{y:.1f} MiB<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="batch size B", type="category")
    fig.update_yaxes(title="MiB read per decode step")
    return _layout(fig, "Bytes one decode step reads", height=320)


# ---------------------------------------------------------------- 2 · static vs continuous batching
def timeline_figure(run: scheduler.ServeRun) -> go.Figure:
    """Which request holds which slot at every step, and what the model does for it there."""
    fig = go.Figure()
    for kind, color in KIND_COLORS.items():
        cells = [c for c in run.cells if c.kind == kind]
        fig.add_trace(go.Scatter(
            x=[c.step for c in cells], y=[f"slot {c.slot}" for c in cells], mode="markers+text", name=kind,
            marker=dict(symbol="square", size=18, color=color), text=[f"r{c.rid}" for c in cells],
            textfont=dict(size=8, color=palette.PROMPT_CHIP if kind != scheduler.WAITING else palette.INK),
            customdata=[[c.rid, run.step_end_ms[c.step] / 1000 if c.step < len(run.step_end_ms) else None]
                        for c in cells],
            hovertemplate="step %{x}, %{y}: request r%{customdata[0]} (" + kind + "), ends at %{customdata[1]:.2f} s"
                          "<extra></extra>"))
    fig.update_xaxes(title="step (one decode pass over the batch, then any prefill for joining requests)")
    fig.update_yaxes(categoryorder="array", categoryarray=[f"slot {s}" for s in reversed(range(run.slots))])
    return _layout(fig, f"{run.policy.capitalize()} batching: {len(run.step_end_ms)} steps, "
                        f"{run.total_ms / 1000:,.2f} s", height=120 + 34 * run.slots)


def waits_figure(runs: dict[str, scheduler.ServeRun]) -> go.Figure:
    """Per request: when its first token came (marker) and when it was done (bar), under each policy."""
    fig = go.Figure()
    for policy, run in runs.items():
        served = sorted(run.finished(), key=lambda s: s.rid)
        names = [f"r{s.rid}" for s in served]
        color = POLICY_COLORS[policy]
        fig.add_trace(go.Bar(x=names, y=[s.done_ms / 1000 for s in served], name=f"{policy}: done",
                             marker_color=color, offsetgroup=policy,
                             hovertemplate="%{x} done at %{y:.2f} s<extra></extra>"))
        fig.add_trace(go.Scatter(x=names, y=[s.first_token_ms / 1000 for s in served], mode="markers",
                                 name=f"{policy}: first token", marker=dict(color=palette.HIGHLIGHT, symbol="line-ew",
                                                                            size=22, line=dict(width=3, color=color)),
                                 offsetgroup=policy, hovertemplate="%{x} first token at %{y:.2f} s<extra></extra>"))
    fig.update_layout(barmode="group", scattermode="group")
    fig.update_yaxes(title="seconds after the queue arrived", rangemode="tozero")
    return _layout(fig, "Time to first token (tick: queued, prefill, first choice) and latency (bar), per request")


# ---------------------------------------------------------------- 3 · speculative decoding
def rounds_figure(run: Speculated) -> go.Figure:
    """Every round: guesses kept, the token the model adds itself, the guess it rejected (at most one: the round
    ends there) and the guesses after it, never tested."""
    x = list(range(1, len(run.rounds) + 1))
    rejected = [int(r.accepted < len(r.drafted)) for r in run.rounds]
    fig = go.Figure()
    for name, values, color in (
            ("guesses kept", [r.accepted for r in run.rounds], palette.GOOD),
            ("model's own token", [1] * len(run.rounds), palette.ACCENT),
            ("guess rejected", rejected, palette.MUTED),
            ("guesses never tested", [len(r.drafted) - r.accepted - no for r, no in zip(run.rounds, rejected)],
             palette.FADED)):
        fig.add_trace(go.Bar(x=x, y=values, name=name, marker_color=color,
                             hovertemplate="round %{x}: %{y} " + name + "<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="round (one verify pass of the model each)")
    fig.update_yaxes(title="tokens", dtick=1)
    return _layout(fig, f"{run.draft}, k = {run.k}: {len(run.tokens)} tokens in {run.forward_passes} model passes",
                   height=300)


# ---------------------------------------------------------------- 4 · precision
def dial_figure(curves: dict[str, list[tuple[int, precision.Quality]]]) -> go.Figure:
    """KL from float32 (log scale) and top-1 agreement against the bits each weight is rounded to."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("KL from float32 (bits per token, log scale)",
                                                        "top-1 agreement with float32"))
    for (label, points), color in zip(curves.items(), (palette.ACCENT, palette.HIGHLIGHT)):
        bits = [b for b, _ in points]
        fig.add_trace(go.Scatter(x=bits, y=[max(q.kl_bits, 1e-9) for _, q in points], mode="lines+markers",
                                 name=label, line=dict(color=color), legendgroup=label,
                                 hovertemplate="%{x} bits: KL %{y:.3g}<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(x=bits, y=[q.top1 for _, q in points], mode="lines+markers", name=label,
                                 line=dict(color=color), legendgroup=label, showlegend=False,
                                 hovertemplate="%{x} bits: %{y:.0%}<extra></extra>"), row=1, col=2)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05], row=1, col=2)
    fig.update_xaxes(title="bits per weight", autorange="reversed", dtick=1)
    return _layout(fig, "Rounding the layers' weights to fewer bits")


def pass_rows_figure(by_rows: dict[int, int]) -> go.Figure:
    """Passes of the last minute by the rows they carried.

    Redrawn every few seconds by the live panel, so it is built in one constructor call: plotly validates a
    figure on every ``update_*`` call, and building it piece by piece cost 8 ms against 1.2 ms this way."""
    return go.Figure({
        "data": [{"type": "bar", "x": list(by_rows), "y": list(by_rows.values()), "name": "passes",
                  "marker": {"color": palette.ACCENT}, "hovertemplate": "%{y} passes of %{x} rows<extra></extra>"}],
        "layout": {"title": {"text": "Decode passes in the last minute, by rows"}, "height": 280,
                   "margin": {"l": 60, "r": 40, "t": 70, "b": 50},
                   "legend": LEGEND,
                   "xaxis": {"title": {"text": "rows (tabs' steps) in one pass"}, "dtick": 1},
                   "yaxis": {"title": {"text": "passes"}}}})
