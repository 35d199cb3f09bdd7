"""Beam search on the KV cache: same beams as model.generate(num_beams=...), a sound tree, a pure step."""
import pytest
import torch

from autoreg_core import Session
from autoreg_core.engine import prefix
from autoreg_core.engine.session import encode_prompt
from autoreg_core.experiments.beam_search import (
    FINISHED,
    KEPT,
    NEG,
    PRUNED,
    BeamSettings,
    beam_search,
    beam_step,
    greedy_path,
    start,
)


def _generate(bundle, ids, width, n, lp, **kwargs):
    out = bundle.model.generate(torch.tensor([ids]), num_beams=width, do_sample=False, max_new_tokens=n,
                                length_penalty=lp, return_dict_in_generate=True, output_scores=True, **kwargs)
    return out.sequences[0, len(ids):].tolist(), float(out.sequences_scores[0])


def _search(bundle, ids, **settings):
    with_greedy = settings.pop("with_greedy", True)
    return beam_search(bundle, prefix.prefill(bundle, ids), BeamSettings(**settings), with_greedy=with_greedy)


def _check_tree(res):
    by_id = {n.id: n for n in res.nodes}
    assert len(by_id) == len(res.nodes)  # node ids are unique
    for node in res.nodes[1:]:
        parent = by_id[node.parent]
        assert node.step == parent.step + 1
        assert node.cum_logprob == pytest.approx(parent.cum_logprob + node.logprob, abs=1e-4)
        assert node.logprob <= 1e-6
        assert node.status in (KEPT, FINISHED, PRUNED)
        assert parent.status == KEPT  # only running beams are expanded
    for step in range(1, res.steps + 1):
        layer = [n for n in res.nodes if n.step == step]
        assert 0 < len(layer) <= 2 * res.settings.num_beams
        assert sum(n.status == KEPT for n in layer) <= res.settings.num_beams
    for beam in res.beams:
        path = res.path(beam.node_id)
        assert [by_id[i].token_id for i in path] == beam.token_ids and len(path) == beam.length
        assert by_id[beam.node_id].status == FINISHED
        alpha = res.settings.length_penalty
        assert beam.score == pytest.approx(beam.cum_logprob / len(beam.token_ids) ** alpha, rel=1e-5)
    assert [b.score for b in res.beams] == sorted((b.score for b in res.beams), reverse=True)


@pytest.mark.parametrize("prompt,width,n,lp", [
    ("The cat sat on the", 3, 8, 1.0),
    ("Once upon a time", 2, 6, 0.0),
    ("def add(a, b):", 4, 10, 2.0),
    ("Émile a mangé", 5, 12, 1.0),
])
def test_best_beam_equals_generate_tiny(tiny, prompt, width, n, lp):
    ids = tiny.tokenizer(prompt)["input_ids"]
    res = _search(tiny, ids, num_beams=width, max_new_tokens=n, length_penalty=lp)
    tokens, score = _generate(tiny, ids, width, n, lp)
    assert res.best.token_ids == tokens and res.best.length == len(tokens)
    assert res.best.score == pytest.approx(score, abs=1e-4)
    _check_tree(res)


def test_repetition_penalty_and_early_stopping_follow_generate(tiny):
    ids = tiny.tokenizer("The cat sat on the mat. The cat")["input_ids"]
    res = _search(tiny, ids, num_beams=3, max_new_tokens=10, repetition_penalty=1.5)
    tokens, score = _generate(tiny, ids, 3, 10, 1.0, repetition_penalty=1.5)
    assert res.best.token_ids == tokens and res.best.score == pytest.approx(score, abs=1e-4)
    plain = _search(tiny, ids, num_beams=3, max_new_tokens=10)
    assert plain.best.token_ids != res.best.token_ids  # the penalty changed the search
    eos = [plain.nodes[1].token_id]
    for early in (True, "never"):
        res = _search(tiny, ids, num_beams=3, max_new_tokens=8, early_stopping=early, eos_token_ids=tuple(eos))
        tokens, score = _generate(tiny, ids, 3, 8, 1.0, early_stopping=early, eos_token_id=eos)
        assert res.best.token_ids == tokens and res.best.score == pytest.approx(score, abs=1e-4), early
        _check_tree(res)


def test_beam_from_a_session_leaves_the_session_alone(tiny):
    session = Session(tiny, "The dog sat on the")
    session.prefill()
    before = (session.cache_len, session.cache.layers[0].keys.clone(), session.pending_logits.clone())
    lent = beam_search(tiny, prefix.of_session(session), BeamSettings(num_beams=3, max_new_tokens=6))
    assert session.cache_len == before[0] and torch.equal(session.cache.layers[0].keys, before[1])
    assert torch.equal(session.pending_logits, before[2])
    fresh = _search(tiny, session.ids, num_beams=3, max_new_tokens=6)
    assert lent.best.token_ids == fresh.best.token_ids and lent.best.length == fresh.best.length
    assert [b.token_ids for b in lent.beams] == [b.token_ids for b in fresh.beams]
    # one decode pass per step after the first, plus the greedy path's; no prefill
    assert lent.forward_passes == (lent.steps - 1) + (len(lent.greedy_ids) - 1)


def test_eos_beams_finish_early(tiny):
    """With EOS allowed to be any frequent token, beams finish and the tree marks them."""
    ids = tiny.tokenizer("The cat")["input_ids"]
    res0 = _search(tiny, ids, num_beams=3, max_new_tokens=6, with_greedy=False)
    eos = [res0.nodes[1].token_id]  # the very first candidate: at least one beam will end on it
    res = _search(tiny, ids, num_beams=3, max_new_tokens=6, eos_token_ids=tuple(eos))
    finished = [n for n in res.nodes if n.status == FINISHED]
    assert finished and all(n.ends_with_eos or n.step == res.settings.max_new_tokens for n in finished)
    assert any(n.ends_with_eos and n.step == 1 for n in finished)
    tokens, score = _generate(tiny, ids, 3, 6, 1.0, eos_token_id=eos)
    assert res.best.token_ids == tokens and res.best.score == pytest.approx(score, abs=1e-4)
    _check_tree(res)


def test_greedy_path_equals_generate_and_bad_settings(tiny):
    ids = tiny.tokenizer("A bird")["input_ids"]
    res = _search(tiny, ids, num_beams=2, max_new_tokens=5)
    out = tiny.model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=5)
    expected = out[0, len(ids):].tolist()
    assert res.greedy_ids == expected and len(res.greedy_ids) == len(expected)
    assert len(res.greedy_logprobs) == len(expected) and all(lp <= 0 for lp in res.greedy_logprobs)
    with pytest.raises(ValueError):
        _search(tiny, ids, num_beams=0, max_new_tokens=5)
    with pytest.raises(ValueError):
        _search(tiny, ids, num_beams=2, max_new_tokens=0)


def test_width_one_is_greedy_when_nothing_ends(tiny):
    ids = tiny.tokenizer("Once upon")["input_ids"]
    res = _search(tiny, ids, num_beams=1, max_new_tokens=6, eos_token_ids=())
    ids_g, _, forwards = greedy_path(tiny, prefix.prefill(tiny, ids), 6, ())
    assert res.best.token_ids == ids_g and res.best.length == 6 and forwards == 5


def test_beam_step_is_pure_arithmetic():
    """On hand-made log-probs: the top B run on, an EOS among the top B finishes, the rest is pruned."""
    settings = BeamSettings(num_beams=2, max_new_tokens=3, length_penalty=1.0, eos_token_ids=(0,))
    state = start([7, 8], settings, settings.eos_token_ids)
    logp = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]] * 2))
    state1, nodes = beam_step(state, logp)
    assert [n.token_id for n in nodes] == [0, 1, 2, 3]  # beam 1 is a placeholder: only beam 0's tokens
    assert [n.status for n in nodes] == [FINISHED, KEPT, KEPT, PRUNED]
    assert state1.seqs.tolist() == [[7, 8, 1], [7, 8, 2]] and state1.parents.tolist() == [0, 0]
    assert [b.token_ids for b in state1.ranked()] == [[0]]
    assert state1.ranked()[0].score == pytest.approx(float(torch.log(torch.tensor(0.5))))
    assert state1.step == 1 and state1.running and state1.node_count == 5
    assert state.step == 0 and state.seqs.shape == (2, 2)  # the old state is untouched
    # both running beams are worse than the finished one: nothing can improve, the search stops
    state2, nodes2 = beam_step(state1, logp)
    assert not state2.running and not state2.improvable
    assert all(n.parent in (2, 3) for n in nodes2) and float(state2.scores.max()) > NEG / 2


# ---------------------------------------------------------------- the embedded model (integration)
@pytest.mark.parametrize("prompt,chat,width", [
    ("The cat sat on the", False, 3),
    ("What is the capital of France?", True, 3),
    ("Once upon a time", False, 3),
    ("Say hi.", True, 5),
])
def test_best_beam_equals_generate_embedded(embedded, prompt, chat, width):
    ids = encode_prompt(embedded, prompt, chat)
    res = _search(embedded, ids, num_beams=width, max_new_tokens=8, length_penalty=1.0, with_greedy=False)
    tokens, score = _generate(embedded, ids, width, 8, 1.0)
    assert res.best.token_ids == tokens and res.best.length == len(tokens)
    assert res.best.score == pytest.approx(score, abs=1e-4)
