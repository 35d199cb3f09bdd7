"""The one generation loop: greedy equals generate, EOS and max_new end it, a stop is honoured, and
every token says which decode pass produced its logits."""
import torch

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode
from autoreg_core.engine.loop import generation_loop


def _prefill(bundle, ids):
    cache = decode.new_cache(bundle)
    return cache, decode.forward(bundle, ids, cache).logits[0]


def test_greedy_loop_gives_generates_tokens(tiny):
    ids = tiny.tokenizer("The cat sat")["input_ids"]
    cache, logits = _prefill(tiny, ids)
    steps = list(generation_loop(tiny, cache, list(ids), logits, 12))
    out = tiny.model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False, eos_token_id=None,
                              pad_token_id=tiny.pad_id)
    assert [s.token for s in steps] == out[0, len(ids):].tolist() and len(steps) == 12
    assert steps[0].pass_ms is None and all(s.pass_ms > 0 for s in steps[1:])
    assert cache.get_seq_length() == len(ids) + 11  # the last token is never fed back


def test_an_eos_token_ends_the_loop_after_it(tiny):
    ids = tiny.tokenizer("The cat sat")["input_ids"]
    cache, logits = _prefill(tiny, ids)
    first = [s.token for s in generation_loop(tiny, cache, list(ids), logits, 8)]
    cache, logits = _prefill(tiny, ids)
    stopped = [s.token for s in generation_loop(tiny, cache, list(ids), logits, 8, eos={first[2]})]
    assert stopped == first[: first.index(first[2]) + 1]


def test_should_stop_ends_the_loop_before_the_next_pass(tiny):
    ids = tiny.tokenizer("Once")["input_ids"]
    cache, logits = _prefill(tiny, ids)
    asked = []
    steps = list(generation_loop(tiny, cache, list(ids), logits, 10,
                                 should_stop=lambda: len(asked.append(1) or asked) >= 3))
    assert len(steps) == 3 and cache.get_seq_length() == len(ids) + 2


def test_seeded_sampling_repeats_itself(tiny):
    ids = tiny.tokenizer("Once")["input_ids"]
    config = SamplingConfig(temperature=1.2, top_k=20)
    runs = []
    for _ in range(2):
        cache, logits = _prefill(tiny, ids)
        generator = torch.Generator().manual_seed(9)
        runs.append([s.token for s in generation_loop(tiny, cache, list(ids), logits, 10, config, generator)])
    assert runs[0] == runs[1] and len(runs[0]) == 10
