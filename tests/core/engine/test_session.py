"""The stepping session on a tiny random model: cache correctness, replay, undo, force, stop, threads."""
import threading

import pytest
import torch

from autoreg_core import GenerationStopped, SamplingConfig, Session, SessionError

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=200)
SAMPLED = SamplingConfig(temperature=1.3, top_k=30, top_p=0.95, seed=11, max_new_tokens=200)


def full_forward_logits(bundle, ids):
    with torch.inference_mode():
        return bundle.model(torch.tensor([ids]), use_cache=False).logits[0, -1].float()


def test_cached_step_logits_equal_full_forward(tiny):
    s = Session(tiny, "The cat sat on the mat.")
    for n in (1, 5, 17, 40):
        while len(s.records) < n:
            s.step(SAMPLED)
        assert torch.allclose(s.pending_logits, full_forward_logits(tiny, s.ids), atol=1e-4, rtol=1e-4)
        assert s.cache_len == len(s.ids)


def test_greedy_matches_generate(tiny):
    s = Session(tiny, "Once upon a time")
    s.generate(30, GREEDY)
    ids = torch.tensor([s.prompt_ids])
    out = tiny.model.generate(ids, max_new_tokens=30, do_sample=False, eos_token_id=None)
    assert len(s.generated_ids) == 30
    assert s.generated_ids == out[0, len(s.prompt_ids):].tolist()


def test_seeded_sampling_matches_generate_and_its_scores(tiny):
    cfg = SamplingConfig(temperature=0.9, top_k=25, top_p=0.9, min_p=0.01, repetition_penalty=1.2,
                         seed=5, max_new_tokens=20)
    s = Session(tiny, "The dog")
    s.generate(20, cfg)
    torch.manual_seed(5)
    out = tiny.model.generate(torch.tensor([s.prompt_ids]), max_new_tokens=20, do_sample=True,
                              temperature=0.9, top_k=25, top_p=0.9, min_p=0.01, repetition_penalty=1.2,
                              eos_token_id=None, output_scores=True, return_dict_in_generate=True)
    assert len(s.generated_ids) == 20 == len(out.scores)
    assert s.generated_ids == out.sequences[0, len(s.prompt_ids):].tolist()
    for rec, scores in zip(s.records, out.scores):
        mine = s.pipeline(rec).final_scores
        theirs = scores[0]
        assert torch.equal(torch.isinf(mine), torch.isinf(theirs))
        finite = ~torch.isinf(mine)
        assert torch.allclose(mine[finite], theirs[finite], atol=1e-4)
        assert rec.prob_filtered > 0  # the draw lies in the filtered support


def test_same_seed_replays_and_other_seed_differs(tiny):
    a, b, c = (Session(tiny, "A bird") for _ in range(3))
    a.generate(25, SAMPLED)
    b.generate(25, SAMPLED)
    c.generate(25, SamplingConfig(**{**SAMPLED.__dict__, "seed": 12}))
    assert a.generated_ids == b.generated_ids
    assert a.generated_ids != c.generated_ids


def test_undo_then_step_reproduces_record(tiny):
    s = Session(tiny, "The cat")
    s.generate(6, SAMPLED)
    last = s.records[-1]
    cache_len = s.cache_len
    undone = s.undo()
    assert undone is last and s.cache_len == cache_len - 1 and len(s.ids) == cache_len - 1
    again = s.step(SAMPLED)
    assert ((again.token_id, again.prob, again.rank, again.logprob)
            == (last.token_id, last.prob, last.rank, last.logprob))
    assert torch.equal(again.logits, last.logits)


def test_undo_crops_the_cache_instead_of_recomputing(tiny, monkeypatch):
    s = Session(tiny, "The cat")
    s.generate(3, SAMPLED)
    calls = []
    import autoreg_core.engine.decode as decode_module

    monkeypatch.setattr(decode_module, "forward", lambda *a, **k: calls.append(1))
    s.undo()
    assert calls == []
    assert Session(tiny, "x").undo() is None


def test_old_records_keep_only_their_summary_and_undo_past_them_recomputes(tiny, monkeypatch):
    import autoreg_core.engine.session as session_module

    monkeypatch.setattr(session_module, "FULL_LOGITS_KEPT", 4)
    s = Session(tiny, "The cat")
    s.generate(10, SAMPLED)
    assert [r.logits is not None for r in s.records] == [False] * 6 + [True] * 4
    old = s.records[2]
    with pytest.raises(LookupError, match="older"):
        old.probs_before()
    assert old.top_ids.shape == (session_module.TOP_STORED,) and old.top_probs[0] >= old.top_probs[-1]
    # the stored top-N is exact: it equals the softmax of a full forward pass at that step
    probs = torch.softmax(full_forward_logits(tiny, s.ids[:old.context_len]), dim=-1)
    assert torch.allclose(old.top_probs, probs[old.top_ids.long()], atol=1e-5)
    # undo all the way back (past the window): the same tokens come out again
    tokens = list(s.generated_ids)
    while s.records:
        s.undo()
        assert torch.allclose(s.pending_logits, full_forward_logits(tiny, s.ids), atol=1e-4, rtol=1e-4)
    assert s.cache_len == len(s.prompt_ids)
    s.generate(10, SAMPLED)
    assert s.generated_ids == tokens


def test_force_by_id_and_text(tiny):
    s = Session(tiny, "The cat sat on the")
    target = tiny.tokenizer(" mat", add_special_tokens=False)["input_ids"]
    assert len(target) == 1
    rec = s.force(" mat", GREEDY)
    assert rec.forced and rec.token_id == target[0] and s.generated_ids == target
    assert rec.rank >= 1 and 0 <= rec.prob <= 1
    rec2 = s.force(int(target[0]), GREEDY)
    assert rec2.token_id == target[0]
    with pytest.raises(SessionError, match="not a single token"):
        s.force(" the cat sat", GREEDY)
    with pytest.raises(SessionError):
        s.force("", GREEDY)
    with pytest.raises(SessionError):
        s.force(10**9, GREEDY)
    assert s.generated_ids == target * 2  # failed forces changed nothing


def test_stop_on_eos_max_tokens_and_stop_sequence(tiny):
    eos = tiny.tokenizer.eos_token_id
    s = Session(tiny, "The cat")
    rec = s.force(eos, GREEDY)
    assert rec.stop[0] == "eos"
    with pytest.raises(GenerationStopped):
        s.step(GREEDY)
    s.undo()

    s = Session(tiny, "The cat")
    recs = s.generate(50, SamplingConfig(temperature=0, max_new_tokens=4))
    assert len(recs) == 4 and recs[-1].stop[0] == "max_new_tokens"
    more = s.generate(2, SamplingConfig(temperature=0, max_new_tokens=6))  # loosening resumes
    assert len(more) == 2

    s = Session(tiny, "The cat")
    s.force(" sat", GREEDY)
    rec = s.force(" on", SamplingConfig(temperature=0, stop_sequences=("sat on",)))
    assert rec.stop[0] == "stop_sequence" and "sat on" in rec.stop[1]


def test_generate_honours_cancel_hook(tiny):
    s = Session(tiny, "The cat")
    seen = []
    recs = s.generate(20, SAMPLED, on_step=seen.append, should_stop=lambda: len(seen) >= 3)
    assert len(recs) == 3 == len(seen)


def test_two_threads_get_what_they_would_get_alone(tiny):
    cfgs = [SamplingConfig(temperature=1.0, seed=1), SamplingConfig(temperature=1.0, seed=2)]
    alone = []
    for cfg in cfgs:
        s = Session(tiny, "Once upon")
        s.generate(40, cfg)
        alone.append(s.generated_ids)
    sessions = [Session(tiny, "Once upon") for _ in cfgs]
    barrier = threading.Barrier(2)

    def run(s, cfg):
        barrier.wait()
        for _ in range(40):
            s.step(cfg)

    threads = [threading.Thread(target=run, args=(s, c)) for s, c in zip(sessions, cfgs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [s.generated_ids for s in sessions] == alone


def test_records_hold_what_the_page_needs(tiny):
    s = Session(tiny, "The cat")
    rec = s.step(SAMPLED)
    probs = rec.probs_before()
    assert abs(float(probs.sum()) - 1) < 1e-5
    assert abs(float(s.pipeline(rec).probs.sum()) - 1) < 1e-5
    assert rec.prob == pytest.approx(float(probs[rec.token_id]))
    assert rec.logprob == pytest.approx(float(torch.log(probs[rec.token_id])), abs=1e-4)
    assert rec.rank == int((probs > probs[rec.token_id]).sum()) + 1
    assert rec.generator_state is not None and rec.cache_len == len(s.ids)
    assert rec.time_ms >= rec.forward_ms > 0
    assert int(rec.top_ids[0]) == int(torch.argmax(rec.logits))
    assert rec.prob_filtered == pytest.approx(float(s.pipeline(rec).probs[rec.token_id]))
    assert 0 < rec.kept <= tiny.spec.vocab
    assert s.sequence_logprob() == pytest.approx(rec.logprob)
    assert s.perplexity() == pytest.approx(float(torch.exp(torch.tensor(-rec.logprob))), rel=1e-5)


@pytest.mark.parametrize("prompt", ["", "   \n\t "])
def test_empty_prompt_is_refused(tiny, prompt):
    with pytest.raises(SessionError, match="empty"):
        Session(tiny, prompt)


def test_too_long_prompt_is_refused(tiny):
    with pytest.raises(SessionError, match="at most"):
        Session(tiny, "cat " * 1000)


@pytest.mark.parametrize("prompt", ["bell\x07 and \x00 null", "🙂🚀 emoji", "مرحبا بالعالم",
                                    "<script>alert(1)</script><b>x</b>"])
def test_unusual_prompts_step_fine(tiny, prompt):
    s = Session(tiny, prompt)
    recs = s.generate(3, SAMPLED)
    assert len(recs) == 3 and len(s.ids) == len(s.prompt_ids) + 3
    assert s.text == tiny.tokenizer.decode(s.ids)


def test_chat_mode_wraps_prompt_in_template(tiny):
    s = Session(tiny, "Hello", chat=True)
    assert "<|im_start|>" in s.text and s.text.rstrip().endswith("assistant")
    views = s.views()
    assert any(v.special and v.piece == "<|im_start|>" for v in views)


def test_attention_capture_is_bounded(tiny, monkeypatch):
    import autoreg_core.engine.session as session_module

    monkeypatch.setattr(session_module, "MAX_DECODE_CAPTURE", 8)
    monkeypatch.setattr(session_module, "MAX_PREFILL_CAPTURE", 4)
    s = Session(tiny, "The cat sat on", capture_attention=True)  # 4 tokens: prefill captured
    recs = s.generate(6, SamplingConfig(temperature=0))
    assert s.prefill_record.attention is not None
    assert [r.attention is not None for r in recs] == [True] * 4 + [False] * 2
    long = Session(tiny, "The cat sat on the mat", capture_attention=True)
    long.prefill()
    assert long.prefill_record.attention is None


def test_captured_attention_stays_within_the_tab_budget(tiny, monkeypatch):
    import autoreg_core.engine.session as session_module

    s = Session(tiny, "The cat sat on", capture_attention=True)
    s.generate(6, SamplingConfig(temperature=0))
    layers, heads = tiny.spec.n_layers, tiny.spec.n_heads
    row = lambda length: 2 * layers * heads * length  # noqa: E731 - float16 bytes of one decode row
    P = s.prompt_len
    full_bytes = 2 * layers * heads * P * P + sum(row(P + i) for i in range(1, 7))
    assert s.attention_bytes() == full_bytes
    budget = 2 * layers * heads * P * P + row(P + 6) + row(P + 7)  # room for the triangle and two rows
    monkeypatch.setattr(session_module, "ATTENTION_BUDGET", budget)
    s.step(SamplingConfig(temperature=0))  # a seventh row arrives: the oldest go
    assert [r.attention is not None for r in s.records] == [False] * 5 + [True] * 2
    assert s.attention_bytes() <= budget and s.prefill_record.attention is not None


# ---------------------------------------------------------------- what a session is handed, and its version
def test_a_default_session_steps_solo_and_shares_no_prefill(tiny, monkeypatch):
    """A notebook's ``Session(bundle, prompt)``: every decode token its own pass through ``decode.forward``,
    no prefill cache, whatever the server's switches say."""
    from autoreg_core.engine import decode

    monkeypatch.setenv("AUTOREG_BATCH", "1")
    fed = []
    real = decode.forward
    monkeypatch.setattr(decode, "forward", lambda b, ids, *a, **k: fed.append(len(ids)) or real(b, ids, *a, **k))
    s = Session(tiny, "The cat")
    assert s.prefill_cache is None
    s.generate(3, GREEDY)
    assert fed == [s.prompt_len, 1, 1, 1]
    assert all(r.pass_rows == 1 for r in s.records)
    again = Session(tiny, "The cat")
    again.prefill()
    assert fed.count(s.prompt_len) == 2  # nothing shared: the same prompt is prefilled again


def test_an_injected_step_pass_and_prefill_cache_are_the_ones_used(tiny):
    from autoreg_core.engine.passes import PassResult, solo_step

    solo, asked = solo_step(tiny), []

    def step_pass(cache, token, owner=None):
        asked.append((token, owner))
        done = solo(cache, token)
        return PassResult(done.logits, done.ms, rows=3)  # as if two other tabs rode along

    class Store:
        def __init__(self):
            self.kept, self.looked = {}, []

        def lookup(self, bundle, ids):
            self.looked.append(tuple(ids))
            return self.kept.get(tuple(ids))

        def remember(self, bundle, ids, cache, logits, ms):
            from types import SimpleNamespace

            from autoreg_core.engine import decode
            self.kept[tuple(ids)] = SimpleNamespace(cache=decode.copy_cache(cache, bundle), logits=logits.clone(),
                                                    prefill_ms=ms)

    store = Store()
    s = Session(tiny, "The cat", step_pass=step_pass, prefill_cache=store)
    s.generate(2, GREEDY)
    assert [owner for _, owner in asked] == [s, s] and [t for t, _ in asked] == s.generated_ids
    assert [r.pass_rows for r in s.records] == [3, 3]
    other = Session(tiny, "The cat", prefill_cache=store)
    other.generate(2, GREEDY)
    assert store.looked == [tuple(s.prompt_ids)] * 2 and other.generated_ids == s.generated_ids
    assert other.prefill_record.time_ms == s.prefill_record.time_ms  # started from the stored prefill
    assert other.prefill_record.copied and not s.prefill_record.copied  # so its time is the first tab's pass


def test_the_version_grows_by_one_with_each_change_and_not_with_reads(tiny):
    s = Session(tiny, "The cat sat")
    assert s.version == 0
    s.prefill()
    assert s.version == 1
    for read in (s.views, s.snapshot, lambda: s.next_pipeline(SAMPLED), lambda: s.stop_reason(SAMPLED), s.prefill,
                 lambda: s.text, s.perplexity):
        read()
        assert s.version == 1
    s.step(SAMPLED)
    assert s.version == 2
    s.force(int(s.records[0].top_ids[1]), SAMPLED)
    assert s.version == 3
    s.undo()
    assert s.version == 4
    s.generate(3, SAMPLED)
    assert s.version == 7
    s.reset()
    assert s.version == 8
    assert Session(tiny, "x").undo() is None  # nothing to undo: nothing changed
    s.next_pipeline(SAMPLED)  # after a reset the next pipeline prefills: that is a change
    assert s.version == 9
    s.next_pipeline(SAMPLED)
    assert s.version == 9


def test_a_step_builds_its_record_complete(tiny):
    s = Session(tiny, "The cat sat")
    rec = s.step(SAMPLED)
    assert rec.cache_len == s.cache_len == len(s.ids) and rec.cache_bytes == s.cache_bytes > 0
    assert rec.time_ms >= rec.forward_ms > 0 and rec.pass_rows == 1 and rec.stop is None


def test_two_threads_generating_one_session_to_one_goal_end_exactly_at_it(tiny):
    """A page rerun mid-Generate can start a second Generate of the same text while the first script's thread is
    still in a step; both stop at the same goal, checked with each step under the session's lock."""
    import threading

    for goal in (1, 7, 12):
        s = Session(tiny, "The cat sat")
        go = threading.Barrier(2)

        def run(s=s, goal=goal, go=go):
            go.wait()
            s.generate(30, SAMPLED, should_stop=lambda: len(s.records) >= goal)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(s.records) == goal == len(s.ids) - s.prompt_len
        assert [r.index for r in s.records] == list(range(1, goal + 1))
