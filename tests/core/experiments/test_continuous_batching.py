"""Static and continuous batching: every request gets exactly its solo greedy tokens; the timeline is sound."""
from __future__ import annotations

from collections import defaultdict

import pytest
import torch
from tiny import tiny_tokenizer, varied_bundle, varied_model
from transformers import GenerationConfig
from transformers.generation.configuration_utils import ContinuousBatchingConfig

from autoreg_core import bundle_from_model
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments.continuous_batching import CONTINUOUS, DECODE, PREFILL, STATIC, WAITING, Request

TEXTS = ["The cat sat on the mat.", "Once upon", "def add(a, b):\n    return a + b", "A bird",
         "The dog sat on the log. A bird flew over", "x", "Émile a mangé une crème", "print(add(2, 3))"]

pytestmark = pytest.mark.usefixtures("one_thread")


def queue(bundle, max_news: list[int]) -> list[Request]:
    return [Request(i, tuple(bundle.tokenizer(TEXTS[i % len(TEXTS)])["input_ids"]), m) for i, m in enumerate(max_news)]


def solo_greedy(bundle, request: Request) -> list[int]:
    """What ``generate`` writes for this request alone (greedy, same EOS)."""
    config = GenerationConfig(max_new_tokens=request.max_new, do_sample=False, eos_token_id=bundle.eos_token_ids,
                              pad_token_id=bundle.tokenizer.pad_token_id)
    out = bundle.model.generate(torch.tensor([request.prompt_ids]), generation_config=config)
    return out[0, len(request.prompt_ids):].tolist()


@pytest.mark.parametrize("policy", [STATIC, CONTINUOUS])
@pytest.mark.parametrize("slots", [1, 3, 8])
def test_every_request_gets_its_solo_greedy_tokens(policy, slots):
    bundle = varied_bundle()
    requests = queue(bundle, [9, 3, 12, 5, 7, 1, 10, 4])
    run = scheduler.serve(bundle, requests, slots, policy)
    assert run.done
    for request in requests:
        expected = solo_greedy(bundle, request)
        got = run.served[request.rid].tokens
        assert got == expected and len(got) == len(expected) == request.max_new
    assert run.generated == sum(r.max_new for r in requests)


def test_the_default_tiny_model_too(tiny):
    requests = queue(tiny, [6, 2, 5])
    for policy in scheduler.POLICIES:
        run = scheduler.serve(tiny, requests, 2, policy)
        assert {r.rid: run.served[r.rid].tokens for r in requests} == {r.rid: solo_greedy(tiny, r) for r in requests}


def test_a_request_stops_at_eos_like_generate():
    bundle = bundle_from_model(varied_model(seed=1), tiny_tokenizer(), name="tiny-eos")
    requests = queue(bundle, [8, 8, 8])
    free_run = solo_greedy(bundle, requests[0])
    stop = next(t for i, t in enumerate(free_run) if i >= 2 and t not in free_run[:i])
    bundle.model.generation_config.eos_token_id = [bundle.tokenizer.eos_token_id, stop]
    expected = {r.rid: solo_greedy(bundle, r) for r in requests}
    assert len(expected[0]) == free_run.index(stop) + 1 < 8
    for policy in scheduler.POLICIES:
        run = scheduler.serve(bundle, requests, 2, policy)
        assert {rid: s.tokens for rid, s in run.served.items()} == expected


def test_same_tokens_as_transformers_continuous_batching():
    """transformers' own ``generate_batch`` (paged cache, its own forward) on a fresh copy of the model."""
    bundle = varied_bundle()
    requests = queue(bundle, [10] * 5)
    ours = scheduler.serve(bundle, requests, 3, CONTINUOUS)
    model = varied_model()
    config = GenerationConfig(max_new_tokens=10, do_sample=False, eos_token_id=bundle.eos_token_ids,
                              pad_token_id=bundle.tokenizer.pad_token_id)
    small = ContinuousBatchingConfig(num_blocks=16, page_size=32, max_batch_tokens=128, max_requests_per_batch=3,
                                     allow_block_sharing=False)
    theirs = model.generate_batch([list(r.prompt_ids) for r in requests], generation_config=config,
                                  continuous_batching_config=small, warmup=False)
    assert [out.generated_tokens for out in theirs.values()] == [ours.served[r.rid].tokens for r in requests]


def _cells_by_request(run):
    cells = defaultdict(list)
    for cell in run.cells:
        cells[cell.rid].append(cell)
    return cells


def test_timelines_static_waits_for_the_longest_continuous_refills_at_once():
    bundle = varied_bundle()
    requests = queue(bundle, [12, 2, 3, 2, 2])
    static, continuous = (scheduler.serve(bundle, requests, 2, p) for p in scheduler.POLICIES)
    for run in (static, continuous):
        steps = defaultdict(list)
        for cell in run.cells:
            steps[(cell.step, cell.slot)].append(cell.kind)
            assert 0 <= cell.slot < 2
        # a slot serves one request per step, except that one may leave and the next be prefilled in it
        assert all(kinds.count(PREFILL) <= 1 and len(kinds) - kinds.count(PREFILL) <= 1 for kinds in steps.values())
        for rid, cells in _cells_by_request(run).items():
            assert cells[0].kind == PREFILL and len({c.slot for c in cells}) == 1
            assert sum(c.kind in (PREFILL, DECODE) for c in cells) == requests[rid].max_new
    # static: r1 (2 tokens) sits finished beside r0 (12 tokens) for 10 steps; r2 waits for the whole batch
    assert [c.kind for c in _cells_by_request(static)[1]] == [PREFILL, DECODE] + [WAITING] * 10
    assert static.served[2].joined_step == 11
    assert static.wasted_rows == 10 + 1  # r3 (2 tokens) also waits one step for r2 (3 tokens)
    # continuous: r2 joins in the step r1 leaves; nothing is computed for finished requests
    assert continuous.served[2].joined_step == 1
    assert continuous.wasted_rows == 0
    assert len(continuous.step_end_ms) < len(static.step_end_ms)
    assert continuous.served[4].joined_step < static.served[4].joined_step  # steps, not wall-clock time


def test_forward_passes_are_counted():
    bundle = varied_bundle()
    requests = queue(bundle, [3, 3])
    run = scheduler.serve(bundle, requests, 2, STATIC)
    assert run.forward_passes == 1 + 2  # one prefill for both, then two decode steps
    assert len(run.step_end_ms) == 3 and run.step_end_ms == sorted(run.step_end_ms)


def test_stop_keeps_what_was_served():
    bundle = varied_bundle()
    requests = queue(bundle, [6, 6, 6])
    calls = []
    run = scheduler.serve(bundle, requests, 1, CONTINUOUS, on_step=lambda r: calls.append(len(r.step_end_ms)),
                          should_stop=lambda: len(calls) >= 3)
    assert not run.done
    assert calls == [1, 2, 3]
    assert run.served[0].tokens == solo_greedy(bundle, requests[0])[:3]  # prefill + two decode steps
    assert set(run.served) == {0}


@pytest.mark.parametrize("slots,max_news,message", [
    (0, [3], "1 to 16 slots"), (17, [3], "1 to 16 slots"), (2, [], "1 to 16 requests"),
    (2, [3] * 17, "1 to 16 requests"),
    (2, [0], "1 to 64 are allowed"), (2, [65], "1 to 64 are allowed"), (2, [64], "needs")])
def test_bad_queues_are_refused(tiny, slots, max_news, message):
    requests = queue(tiny, max_news)
    if message == "needs":
        requests = [Request(0, tuple(range(200)), 64)]
    with pytest.raises(ValueError, match=message):
        scheduler.serve(tiny, requests, slots, STATIC)


def test_embedded_model_serves_exactly_its_solo_greedy_runs(embedded):
    requests = [Request(i, tuple(embedded.tokenizer(text)["input_ids"]), m)
                for i, (text, m) in enumerate([("The capital of France is", 5), ("Once upon a time,", 2),
                                               ("def fibonacci(n):", 4)])]
    for policy in scheduler.POLICIES:
        run = scheduler.serve(embedded, requests, 2, policy)
        for request in requests:
            expected = solo_greedy(embedded, request)
            assert run.served[request.rid].tokens == expected and len(expected) == request.max_new
