"""Cross-tab decode batching: several tabs' steps in one pass give each tab what its solo pass gives."""
import threading

import pytest
import torch

from autoreg_core.engine import decode
from autoreg_core.engine.padding import left_padded_cache
from autoreg_core.runtime.batcher import DecodeBatcher, batched_decode

pytestmark = pytest.mark.usefixtures("one_thread")

PROMPTS = ["The cat sat on the mat.", "Once upon a time", "def add(a, b):", "A bird",
           "The dog sat on the log. A bird flew over the house.", "Émile", "print(add(2, 3))", "The"]


def _prefilled(bundle, prompt: str):
    ids = bundle.tokenizer(prompt)["input_ids"]
    cache = decode.new_cache(bundle)
    fwd = decode.forward(bundle, ids, cache)
    return ids, cache, fwd.logits[0]


def test_left_padding_joins_caches_of_different_lengths(tiny):
    caches = [_prefilled(tiny, p)[1] for p in PROMPTS[:3]]
    joined, mask = left_padded_cache(tiny, caches)
    lengths = [c.get_seq_length() for c in caches]
    assert mask.sum(dim=1).tolist() == lengths and mask.shape[1] == max(lengths)
    for row, cache in enumerate(caches):
        width = lengths[row]
        assert torch.equal(joined.layers[0].keys[row, :, -width:], cache.layers[0].keys[0])
        assert not joined.layers[0].keys[row, :, :mask.shape[1] - width].any()  # zeros on the left


def test_one_batched_pass_gives_each_row_its_solo_logits_and_cache(tiny):
    solo, batched = [], []
    for prompt in PROMPTS:
        ids, cache, logits = _prefilled(tiny, prompt)
        token = int(torch.argmax(logits))
        solo_cache = decode.copy_cache(cache, tiny)
        solo.append((decode.forward(tiny, [[token]], solo_cache).logits[0], solo_cache))
        batched.append((cache, token))
    out, _ = batched_decode(tiny, [c for c, _ in batched], [t for _, t in batched])
    assert len(out) == len(PROMPTS)
    gap = max(float((a - s[0]).abs().max()) for a, s in zip(out, solo))
    assert gap < 1e-4
    for (cache, _), (_, solo_cache) in zip(batched, solo):
        assert cache.get_seq_length() == solo_cache.get_seq_length()
        assert torch.allclose(cache.layers[-1].keys, solo_cache.layers[-1].keys, atol=1e-5)


def _generate(bundle, ids: list[int], n: int) -> list[int]:
    out = bundle.model.generate(torch.tensor([ids]), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                pad_token_id=bundle.pad_id)
    return out[0, len(ids):].tolist()


def _step_concurrently(bundle, batcher, n_steps: int) -> tuple[list[list[int]], list[int]]:
    """Eight tabs, each a thread, stepping greedily through one batcher; their tokens and each pass's rows."""
    results: list[list[int]] = [[] for _ in PROMPTS]
    rows_seen: list[int] = []
    start = threading.Barrier(len(PROMPTS))

    def tab(i: int) -> None:
        _, cache, logits = _prefilled(bundle, PROMPTS[i])
        start.wait()
        for _ in range(n_steps):
            token = int(torch.argmax(logits))
            results[i].append(token)
            shared = batcher.decode(cache, token)
            rows_seen.append(shared.rows)
            logits = shared.logits

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(len(PROMPTS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results, rows_seen


@pytest.mark.parametrize("workers", [1, 2])
def test_eight_tabs_stepping_at_once_get_generates_tokens_exactly(tiny, workers):
    batcher = DecodeBatcher(tiny, gather_ms=20.0, workers=workers)
    results, rows_seen = _step_concurrently(tiny, batcher, 12)
    for prompt, got in zip(PROMPTS, results):
        ids = tiny.tokenizer(prompt)["input_ids"]
        assert got == _generate(tiny, ids, 12) and len(got) == 12
    assert max(rows_seen) > 1  # steps really shared passes
    passes = batcher.passes()
    assert sum(p.rows for p in passes) == 8 * 12 and len(passes) < 8 * 12


def _step_greedily(batcher, cache, logits, n: int, owner=None):
    for _ in range(n):
        shared = batcher.decode(cache, int(torch.argmax(logits)), owner=owner)
        logits = shared.logits
    return shared


def test_a_lone_tab_never_waits_for_company_and_rides_alone(tiny):
    batcher = DecodeBatcher(tiny, busy_s=3600.0)  # whatever the clock, only who stepped decides a wait
    _, cache, logits = _prefilled(tiny, PROMPTS[0])
    shared = _step_greedily(batcher, cache, logits, 4)
    assert shared.rows == 1 and [p.rows for p in batcher.passes()] == [1] * 4
    assert batcher.waits == 0  # its own earlier steps are not "another tab stepping"


def test_a_step_waits_for_company_when_another_tab_stepped_recently(tiny):
    batcher = DecodeBatcher(tiny, busy_s=3600.0)
    _, other, other_logits = _prefilled(tiny, PROMPTS[1])
    _step_greedily(batcher, other, other_logits, 1)
    assert batcher.waits == 0  # the first step of all: nobody else stepped
    _, cache, logits = _prefilled(tiny, PROMPTS[0])
    shared = _step_greedily(batcher, cache, logits, 1)
    assert batcher.waits == 1 and shared.rows == 1  # it waited (in vain: the other tab did not step again)
    totals = batcher.totals()
    assert (totals.passes, totals.tokens, totals.shared_tokens) == (2, 2, 0)


def test_a_tab_gone_or_a_cache_dropped_no_longer_counts_as_another_tab(tiny):
    import gc

    batcher = DecodeBatcher(tiny, busy_s=3600.0)
    _, old, old_logits = _prefilled(tiny, PROMPTS[1])
    _step_greedily(batcher, old, old_logits, 2)
    del old, old_logits  # a Reset drops the cache: the tab starts again on a new one
    gc.collect()
    _, cache, logits = _prefilled(tiny, PROMPTS[1])
    _step_greedily(batcher, cache, logits, 2)
    assert batcher.waits == 0


class _Tab:
    """Stands for a Session: any object that can be weakly referenced."""


def test_one_owner_stepping_on_a_new_cache_is_still_alone(tiny):
    """A tab names itself (its Session) as the owner: a cache it replaced, even one still held elsewhere
    (a kept prefix), is not another tab."""
    batcher = DecodeBatcher(tiny, busy_s=3600.0)
    tab = _Tab()
    _, old, old_logits = _prefilled(tiny, PROMPTS[1])
    _step_greedily(batcher, old, old_logits, 2, owner=tab)
    _, cache, logits = _prefilled(tiny, PROMPTS[1])  # ``old`` is still alive
    _step_greedily(batcher, cache, logits, 2, owner=tab)
    assert batcher.waits == 0
    _step_greedily(batcher, old, old_logits, 1)  # the same old cache stepped by someone else: that one waits
    assert batcher.waits == 1


def test_a_session_reset_does_not_make_its_next_steps_wait(tiny):
    from autoreg_core import SamplingConfig, Session

    mine = DecodeBatcher(tiny, busy_s=3600.0)
    s = Session(tiny, PROMPTS[0], step_pass=mine.decode)
    for _ in range(3):
        s.step(SamplingConfig(temperature=0))
    s.reset()
    for _ in range(3):
        s.step(SamplingConfig(temperature=0))
    assert len(mine.passes()) == 6 and mine.waits == 0


def test_workers_follow_the_forward_slots_unless_the_operator_says(monkeypatch):
    from autoreg_core.runtime import batcher as batcher_module
    from autoreg_core.runtime import forward_slots
    from autoreg_server.settings import Settings

    def wanted(value: str) -> int:
        return Settings.from_environ({"AUTOREG_BATCH_WORKERS": value}).batch_workers

    monkeypatch.setattr(forward_slots, "_slot_count", 2)
    assert batcher_module.worker_count() == 2
    assert batcher_module.worker_count(wanted("3")) == 3
    assert batcher_module.worker_count(wanted("x")) == 2
    assert DecodeBatcher(object(), workers=3).workers == 3 and DecodeBatcher(object()).workers == 2
    monkeypatch.setattr(forward_slots, "_slot_count", None)
    assert batcher_module.worker_count() == 1


def test_an_error_in_a_pass_reaches_the_tab_and_the_switch_is_an_operator_setting(tiny):
    from autoreg_server.settings import Settings

    batcher = DecodeBatcher(tiny)
    _, cache, _ = _prefilled(tiny, PROMPTS[0])
    with pytest.raises(IndexError):
        batcher.decode(cache, 10 ** 9)  # no such token: the embedding lookup fails inside the pass

    def enabled(environ: dict[str, str]) -> bool:
        return Settings.from_environ(environ).batch

    assert enabled({}) and enabled({"AUTOREG_BATCH": "1"}) and not enabled({"AUTOREG_BATCH": "0"})


# ---------------------------------------------------------------- sessions through the batcher, and their replays
def test_sessions_stepping_together_share_passes_and_their_links_replay_the_same_tokens(tiny):
    from autoreg_core import SamplingConfig, Session
    from autoreg_core.engine.replay import recipe_from_dict, recipe_of, recipe_to_dict, replay

    shared = DecodeBatcher(tiny)
    sessions = [Session(tiny, p, step_pass=shared.decode) for p in PROMPTS]
    start = threading.Barrier(len(sessions))
    configs = [SamplingConfig(temperature=0.0 if i % 2 else 0.9, seed=i) for i in range(len(sessions))]

    def tab(i: int) -> None:
        sessions[i].prefill()
        start.wait()
        for _ in range(10):
            sessions[i].step(configs[i])

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(len(sessions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert all(len(s.records) == 10 for s in sessions)
    assert any(r.pass_rows > 1 for s in sessions for r in s.records)
    for s in sessions:
        recipe = recipe_of(s)
        assert recipe.tokens == (tuple(s.generated_ids) if any(r.pass_rows > 1 for r in s.records) else ())
        again = replay(tiny, recipe_from_dict(recipe_to_dict(recipe)))
        assert again.generated_ids == s.generated_ids and len(again.generated_ids) == 10


def test_a_replay_keeps_the_listed_tokens_where_its_own_pass_would_tip_the_other_way(tiny):
    from dataclasses import replace

    from autoreg_core import SamplingConfig, Session
    from autoreg_core.engine.replay import recipe_of, replay

    s = Session(tiny, "The cat sat")
    for _ in range(5):
        s.step(SamplingConfig(temperature=0))
    recipe = recipe_of(s)
    assert recipe.tokens == ()  # every pass was solo: the link stays short
    second = int(s.records[2].top_ids[1])  # as if a shared pass had tipped step 3 to the runner-up
    listed = tuple(s.generated_ids[:2]) + (second,) + tuple(s.generated_ids[3:])
    again = replay(tiny, replace(recipe, tokens=listed))
    assert tuple(again.generated_ids) == listed and again.replay_corrections >= 1
    assert not any(r.forced for r in again.records)  # kept as chosen, not as forced


@pytest.mark.integration
def test_on_the_embedded_model_eight_tabs_stepping_together_give_generates_tokens(embedded):
    """Greedy sessions of different prompt lengths, stepped concurrently through the batcher, give exactly
    ``model.generate``'s tokens (whole sequences, lengths included)."""
    from autoreg_core import SamplingConfig, Session

    prompts = ["The capital of France is", "Once upon a time, a small robot", "def fibonacci(n):", "Hi",
               "The river runs past the old mill, under the stone bridge and on towards the sea", "2 + 2 =",
               "Tell me a joke about cats.", "Water boils at"]
    shared = DecodeBatcher(embedded)
    sessions = [Session(embedded, p, step_pass=shared.decode) for p in prompts]
    start = threading.Barrier(len(sessions))

    def tab(s) -> None:
        s.prefill()
        start.wait()
        s.generate(16, SamplingConfig(temperature=0, max_new_tokens=64))  # stops early at EOS, as generate does

    threads = [threading.Thread(target=tab, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert any(r.pass_rows > 1 for s in sessions for r in s.records)
    for s in sessions:
        out = embedded.model.generate(torch.tensor([s.prompt_ids]), max_new_tokens=16, do_sample=False,
                                      pad_token_id=embedded.pad_id)
        expected = out[0, len(s.prompt_ids):].tolist()
        assert s.generated_ids == expected and len(s.generated_ids) == len(expected) > 0, s.prompt


def test_the_batcher_runs_the_pass_it_was_handed_and_reads_the_timing_it_returns(tiny):
    from autoreg_core.runtime.batcher import PassTiming, timed_batched_decode

    seen = []

    def observed(bundle, caches, tokens):
        logits, timing = timed_batched_decode(bundle, caches, tokens)
        seen.append(len(caches))
        return logits, PassTiming(join_ms=1.0, forward_ms=timing.forward_ms, model_ms=7.0, write_ms=2.0, cpu_ms=3.0)

    mine = DecodeBatcher(tiny, pass_fn=observed)
    _, cache, logits = _prefilled(tiny, PROMPTS[0])
    shared = _step_greedily(mine, cache, logits, 2)
    assert seen == [1, 1] and shared.ms == 7.0 and shared.rows == 1
    spent = mine.breakdown()
    assert (spent.passes, spent.join_ms, spent.model_ms, spent.write_ms, spent.cpu_ms) == (2, 2.0, 14.0, 4.0, 6.0)
