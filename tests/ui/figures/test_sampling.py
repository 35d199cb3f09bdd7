"""The sampling lab's figures: the pipeline, draws and sweep, and the beam tree (pruned nodes grey,
final beams drawn, labels escaped)."""
from __future__ import annotations

import pytest
import torch
from plotly.subplots import make_subplots

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode, prefix
from autoreg_core.experiments import sampling_lab as lab
from autoreg_core.experiments.beam_search import PRUNED, BeamSettings, beam_search
from autoreg_ui import palette
from autoreg_ui.labels import short_label
from autoreg_ui.lessons.sampling.figures import (
    beam_tree_figure,
    beams_frame,
    draw_figure,
    draws_figure,
    pipeline_figure,
    strategies_figure,
    sweep_figure,
    tree_layout,
)
from autoreg_ui.lessons.sampling.figures import pipeline as sampling


def _logits(seed=0, vocab=500):
    return torch.randn(vocab, generator=torch.Generator().manual_seed(seed)) * 3.0


def test_short_labels_are_cut_and_escaped():
    assert short_label("<b>") == "&lt;b&gt;"
    assert short_label("abcdefghijklmnop", 5) == "abcd…" and len(short_label("abcdefghijklmnop")) == 12


def test_pipeline_figure_greys_removed_tokens_and_follows_the_settings():
    logits = _logits(11)
    ids = lab.top_token_ids(logits, 15)
    labels = [f"t{i}<b>" for i in ids]
    pipe = decode.process(logits, None, SamplingConfig(temperature=0.9, top_k=5, top_p=0.9, min_p=0.02))
    fig = pipeline_figure(pipe, ids, labels, chosen=ids[0])
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == len(pipe.stages) + 1  # one panel per stage + the renormalised one
    top_k = bars[[s.name for s in pipe.stages].index(decode.TOP_K)]
    assert list(top_k.marker.color) == [palette.ACCENT] * 5 + [palette.FADED] * 10
    assert list(bars[-1].marker.color[:1]) == [palette.HIGHLIGHT]  # the chosen token
    assert all("<b>" not in t for t in fig.layout.xaxis.ticktext)  # labels are escaped
    n = len(bars)  # token names under the lowest panel of each column only (the browser measures every label)
    shown = [fig.layout["xaxis" + ("" if k == 0 else str(k + 1))].showticklabels for k in range(n)]
    assert shown == [k + sampling.PANEL_COLUMNS >= n for k in range(n)] and shown.count(True) == sampling.PANEL_COLUMNS
    crosses = [t for t in fig.data if t.type == "scatter" and t.hovertemplate.startswith("removed by")]
    assert crosses and set(crosses[-1].text) <= {s.name for s in pipe.stages}
    other = decode.process(logits, None, SamplingConfig(temperature=0.9, top_k=8))
    assert pipeline_figure(other, ids, labels).to_json() != fig.to_json()


@pytest.mark.parametrize("n_panels", [2, 3, 4, 5, 6, 7, 8, 9])
def test_pipeline_panels_sit_where_make_subplots_puts_them(n_panels):
    rows = -(-n_panels // sampling.PANEL_COLUMNS)
    ref = make_subplots(rows=rows, cols=sampling.PANEL_COLUMNS, subplot_titles=["t"] * n_panels,
                        horizontal_spacing=sampling.PANEL_SPACING,
                        vertical_spacing=0.14 / max(rows - 2, 1) + 0.06).layout
    cells = sampling._panel_grid(n_panels)
    assert len(cells) == n_panels  # no axes for the empty cell after an odd number of panels
    for k, (xa, ya, x_domain, y_domain) in enumerate(cells):
        x_axis, y_axis = ref["xaxis" + xa[1:]], ref["yaxis" + ya[1:]]
        assert (x_axis.anchor, y_axis.anchor) == (ya, xa)
        assert list(x_axis.domain) == x_domain and list(y_axis.domain) == y_domain
        assert (ref.annotations[k].x, ref.annotations[k].y) == (sum(x_domain) / 2.0, y_domain[1])


def test_pipeline_figure_marks_the_top_p_and_min_p_cut_offs():
    logits = _logits(11)
    ids = lab.top_token_ids(logits, 15)
    pipe = decode.process(logits, None, SamplingConfig(temperature=0.9, top_p=0.5, min_p=0.05))
    fig = sampling.pipeline_figure(pipe, ids, [str(i) for i in ids])
    names = [s.name for s in pipe.stages]
    k_top_p, k_min_p = names.index(decode.TOP_P), names.index(decode.MIN_P)
    lines = {(s.xref, s.y0) for s in fig.layout.shapes if s.x0 == 0 and s.x1 == 1}
    assert (f"x{k_top_p + 1} domain", 0.5) in lines
    assert (f"x{k_min_p + 1} domain", pipe.stages[k_min_p].threshold) in lines
    texts = [a.text for a in fig.layout.annotations]
    assert f"cut-off {pipe.stages[k_min_p].threshold:.4f}" in texts and any(t.startswith("Σ = ") for t in texts)
    assert any(t.hovertemplate.startswith("cumulative") for t in fig.data)


def test_draw_figures():
    pipe = decode.process(_logits(12), None, SamplingConfig(top_k=40))
    draw = lab.inverse_cdf_draw(pipe.probs, 1)
    fig = draw_figure(draw, pipe.probs, {})
    star = [t for t in fig.data if t.name == "drawn token"]
    assert len(star) == 1 and star[0].y[0] == draw.u
    ids = lab.top_token_ids(pipe.probs, 10)
    bars = draws_figure(ids, [str(i) for i in ids], pipe.probs, lab.draw_many(pipe.probs, 100, 0)).data
    assert [b.name for b in bars] == ["probability", "frequency in 100 draws"] and len(bars[0].x) == 10


def test_draw_figure_shows_a_far_tail_draw_with_a_gap():
    probs = torch.softmax(torch.zeros(200), dim=-1)  # uniform: u lands deep in the list
    draw = lab.inverse_cdf_draw(probs, 0)
    assert draw.position > 30
    fig = draw_figure(draw, probs, {}, max_show=25)
    assert "…" in fig.layout.xaxis.ticktext
    star = [t for t in fig.data if t.name == "drawn token"][0]
    assert fig.layout.xaxis.ticktext[star.x[0]].startswith(f"#{draw.position + 1}")


def test_strategies_and_sweep_figures():
    logits = _logits(13)
    rows = lab.compare_strategies(logits, lab.default_strategies())
    ids = lab.top_token_ids(logits, 12)
    fig = strategies_figure(rows, ids, [str(i) for i in ids])
    assert len(fig.data) == len(rows) == 7
    assert list(fig.data[0].marker.color).count(palette.ACCENT) == 1  # greedy keeps one token
    sweep = sweep_figure(lab.temperature_sweep(logits), 0.7)
    assert len(sweep.data) == 3 and len(sweep.data[0].x) == len(lab.SWEEP_TEMPERATURES)


def test_tree_figure_greys_pruned_nodes(tiny):
    ids = tiny.tokenizer("The cat sat")["input_ids"]
    res = beam_search(tiny, prefix.prefill(tiny, ids), BeamSettings(num_beams=3, max_new_tokens=4))
    fig = beam_tree_figure(res, {n.token_id: f"<{n.token_id}>" for n in res.nodes}, "ctx")
    pruned = [t for t in fig.data if t.name == "pruned"]
    assert pruned and pruned[0].marker.color == palette.FADED
    assert len(pruned[0].x) == sum(n.status == PRUNED for n in res.nodes)
    assert len([t for t in fig.data if (t.name or "").startswith("beam #")]) == len(res.beams)
    assert len([t for t in fig.data if (t.name or "").startswith("greedy")]) == 1
    assert all("<" not in s for t in fig.data if t.text is not None for s in t.text)  # escaped
    frame = beams_frame(res, lambda toks: tiny.tokenizer.decode(toks))
    assert list(frame["rank"])[-1] == "greedy" and len(frame) == len(res.beams) + 1
    rows = frame.to_dict("records")
    assert [r["tokens"] for r in rows[:-1]] == [b.length for b in res.beams]
    assert rows[-1]["tokens"] == len(res.greedy_ids)


def test_tree_layout_puts_each_step_in_its_column(tiny):
    ids = tiny.tokenizer("Once upon")["input_ids"]
    res = beam_search(tiny, prefix.prefill(tiny, ids), BeamSettings(num_beams=2, max_new_tokens=3))
    pos = tree_layout(res)
    assert set(pos) == {n.id for n in res.nodes}
    assert all(pos[n.id][0] == n.step for n in res.nodes)
    for step in range(1, res.steps + 1):
        ys = [pos[n.id][1] for n in res.nodes if n.step == step]
        assert len(set(ys)) == len(ys)  # no two nodes of a step overlap
