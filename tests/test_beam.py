"""Beam search on the KV cache: same best beam as model.generate(num_beams=...), and a sound tree."""
import pytest
import torch

from autoreg_core import Session
from autoreg_core.beam import FINISHED, KEPT, PRUNED, beam_search
from autoreg_ui.figures.beam import PRUNED_COLOR, beam_tree_figure, beams_frame
from autoreg_core.session import encode_prompt


def _generate(bundle, ids, width, n, lp):
    out = bundle.model.generate(torch.tensor([ids]), num_beams=width, do_sample=False, max_new_tokens=n,
                                length_penalty=lp, return_dict_in_generate=True, output_scores=True)
    return out.sequences[0, len(ids):].tolist(), float(out.sequences_scores[0])


def _check_tree(res):
    by_id = {n.id: n for n in res.nodes}
    for node in res.nodes[1:]:
        parent = by_id[node.parent]
        assert node.step == parent.step + 1
        assert node.cum_logprob == pytest.approx(parent.cum_logprob + node.logprob, abs=1e-4)
        assert node.logprob <= 1e-6
        assert node.status in (KEPT, FINISHED, PRUNED)
        assert parent.status == KEPT  # only running beams are expanded
    for step in range(1, res.steps + 1):
        layer = [n for n in res.nodes if n.step == step]
        assert len(layer) <= 2 * res.num_beams
        assert sum(n.status == KEPT for n in layer) <= res.num_beams
    for beam in res.beams:
        path = res.path(beam.node_id)
        assert [by_id[i].token_id for i in path] == beam.token_ids
        assert beam.score == pytest.approx(beam.cum_logprob / len(beam.token_ids) ** res.length_penalty, rel=1e-5)
    assert [b.score for b in res.beams] == sorted((b.score for b in res.beams), reverse=True)


@pytest.mark.parametrize("prompt,width,n,lp", [
    ("The cat sat on the", 3, 8, 1.0),
    ("Once upon a time", 2, 6, 0.0),
    ("def add(a, b):", 4, 10, 2.0),
    ("Émile a mangé", 5, 12, 1.0),
])
def test_best_beam_equals_generate_tiny(tiny, prompt, width, n, lp):
    ids = tiny.tokenizer(prompt)["input_ids"]
    res = beam_search(tiny, ids, num_beams=width, max_new_tokens=n, length_penalty=lp)
    tokens, score = _generate(tiny, ids, width, n, lp)
    assert res.best.token_ids == tokens
    assert res.best.score == pytest.approx(score, abs=1e-4)
    _check_tree(res)


def test_beam_from_a_session_cache_leaves_the_session_alone(tiny):
    session = Session(tiny, "The dog sat on the")
    session.prefill()
    before = (session.cache_len, session.cache.layers[0].keys.clone())
    from_cache = beam_search(tiny, session.ids, num_beams=3, max_new_tokens=6, cache=session.cache,
                             first_logits=session.pending_logits)
    assert session.cache_len == before[0] and torch.equal(session.cache.layers[0].keys, before[1])
    fresh = beam_search(tiny, session.ids, num_beams=3, max_new_tokens=6)
    assert from_cache.best.token_ids == fresh.best.token_ids
    assert from_cache.forward_passes < fresh.forward_passes  # no prefill


def test_eos_beams_finish_early(tiny):
    """With EOS allowed to be any frequent token, beams finish and the tree marks them."""
    ids = tiny.tokenizer("The cat")["input_ids"]
    res0 = beam_search(tiny, ids, num_beams=3, max_new_tokens=6, with_greedy=False)
    eos = [res0.nodes[1].token_id]  # the very first candidate: at least one beam will end on it
    res = beam_search(tiny, ids, num_beams=3, max_new_tokens=6, eos_token_ids=eos)
    finished = [n for n in res.nodes if n.status == FINISHED]
    assert finished and all(n.ends_with_eos or n.step == res.max_new_tokens for n in finished)
    assert any(n.ends_with_eos and n.step == 1 for n in finished)
    tiny.model.generation_config.eos_token_id, old = eos[0], tiny.model.generation_config.eos_token_id
    try:
        tokens, score = _generate(tiny, ids, 3, 6, 1.0)
    finally:
        tiny.model.generation_config.eos_token_id = old
    assert res.best.token_ids == tokens and res.best.score == pytest.approx(score, abs=1e-4)
    _check_tree(res)


def test_greedy_path_and_bad_settings(tiny):
    ids = tiny.tokenizer("A bird")["input_ids"]
    res = beam_search(tiny, ids, num_beams=2, max_new_tokens=5)
    out = tiny.model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=5)
    assert res.greedy_ids == out[0, len(ids):].tolist()[:len(res.greedy_ids)]
    with pytest.raises(ValueError):
        beam_search(tiny, ids, num_beams=0, max_new_tokens=5)
    with pytest.raises(ValueError):
        beam_search(tiny, ids, num_beams=2, max_new_tokens=0)


def test_tree_figure_greys_pruned_nodes(tiny):
    ids = tiny.tokenizer("The cat sat")["input_ids"]
    res = beam_search(tiny, ids, num_beams=3, max_new_tokens=4)
    fig = beam_tree_figure(res, {n.token_id: f"<{n.token_id}>" for n in res.nodes}, "ctx")
    pruned = [t for t in fig.data if t.name == "pruned"]
    assert pruned and pruned[0].marker.color == PRUNED_COLOR
    assert len(pruned[0].x) == sum(n.status == PRUNED for n in res.nodes)
    assert any((t.name or "").startswith("beam #1") for t in fig.data)
    assert any((t.name or "").startswith("greedy") for t in fig.data)
    assert all("<" not in s for t in fig.data if t.text is not None for s in t.text)  # escaped
    frame = beams_frame(res, lambda toks: tiny.tokenizer.decode(toks))
    assert list(frame["rank"])[-1] == "greedy" and len(frame) == len(res.beams) + 1


# ---------------------------------------------------------------- the embedded model (integration)
@pytest.mark.parametrize("prompt,chat,width", [
    ("The cat sat on the", False, 3),
    ("What is the capital of France?", True, 3),
    ("Once upon a time", False, 3),
    ("Say hi.", True, 5),
])
def test_best_beam_equals_generate_embedded(embedded, prompt, chat, width):
    ids = encode_prompt(embedded, prompt, chat)
    res = beam_search(embedded, ids, num_beams=width, max_new_tokens=8, length_penalty=1.0, with_greedy=False)
    tokens, score = _generate(embedded, ids, width, 8, 1.0)
    assert res.best.token_ids == tokens
    assert res.best.score == pytest.approx(score, abs=1e-4)
