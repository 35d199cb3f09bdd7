"""The beam tree figure and table: pruned nodes grey, final beams drawn, labels escaped."""
from autoreg_core import prefix
from autoreg_core.beam import PRUNED, BeamSettings, beam_search
from autoreg_ui import palette
from autoreg_ui.figures.beam import beam_tree_figure, beams_frame, tree_layout


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
