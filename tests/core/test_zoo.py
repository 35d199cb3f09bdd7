"""Every family of the zoo through the engine: stepping = generate, beam = generate(num_beams), batched = solo,
the spec's cache bytes = the measured ones, the recomputed attention = eager attention's, undo then step = step.

The zoo's sliding-window models (Mistral on every layer, Gemma 2 on alternate ones, window 8) are run well
past their window, where a sliding layer's cache has dropped its oldest keys.
"""
from __future__ import annotations

import pytest
import torch
import zoo

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine import decode, prefix
from autoreg_core.engine.attention import supports_attention, unsupported_reason
from autoreg_core.engine.model_spec import ROTARY
from autoreg_core.experiments import attention_rows as rows
from autoreg_core.experiments import kv_exactness, logit_lens, precision, rope
from autoreg_core.experiments import speculative_decoding as sd
from autoreg_core.experiments.beam_search import BeamSettings, beam_search
from autoreg_core.runtime.batcher import batched_decode

pytestmark = pytest.mark.usefixtures("one_thread")

FAMILIES = pytest.mark.parametrize("name", zoo.FAMILIES)
GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=200)
SAMPLED = SamplingConfig(temperature=0.9, top_k=40, top_p=0.95, seed=7, max_new_tokens=200)
PROMPT = "The cat sat on the mat. The dog"
N = 3 * zoo.WINDOW  # steps in a run: well past the sliding window


def _prompt_ids(bundle, prompt: str = PROMPT) -> list[int]:
    return bundle.tokenizer(prompt)["input_ids"]


def _eager_attentions(name: str, ids: list[int]) -> torch.Tensor:
    """The reference: transformers' own eager attention weights of the same weights, [L, H, N, N]."""
    with torch.inference_mode():
        out = zoo.bundle(name, attn="eager").model(torch.tensor([ids]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]).float()


def test_the_zoo_is_the_nine_families():
    assert zoo.FAMILIES == ("gpt2", "gpt_neox", "opt", "phi3", "llama", "qwen2", "qwen3", "mistral", "gemma2")


@FAMILIES
def test_the_eager_twin_has_the_same_weights(name):
    mine, twin = zoo.bundle(name).model.state_dict(), zoo.bundle(name, attn="eager").model.state_dict()
    assert sorted(mine) == sorted(twin)
    assert all(torch.equal(mine[k], twin[k]) for k in mine)


# ---------------------------------------------------------------- stepping = generate
@FAMILIES
@pytest.mark.parametrize("config", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_stepping_equals_generate(name, config):
    """The session's tokens are generate's, whole sequences, stopping where generate stops (EOS or N)."""
    bundle = zoo.bundle(name)
    s = Session(bundle, PROMPT)
    s.generate(N, config)
    kw = dict(do_sample=False) if config.temperature == 0 else dict(
        do_sample=True, temperature=config.temperature, top_k=config.top_k, top_p=config.top_p)
    torch.manual_seed(config.seed)
    out = bundle.model.generate(torch.tensor([s.prompt_ids]), max_new_tokens=N, pad_token_id=bundle.pad_id, **kw)
    expected = out[0, s.prompt_len:].tolist()
    assert len(s.generated_ids) == len(expected)
    assert s.generated_ids == expected
    assert len(expected) == N or expected[-1] in bundle.eos_token_ids
    if config is GREEDY:
        assert len(expected) == N and len(set(expected)) > 3  # the zoo's weights make the output vary


# ---------------------------------------------------------------- beam = generate(num_beams)
@FAMILIES
def test_best_beam_equals_generate(name):
    bundle = zoo.bundle(name)
    ids = _prompt_ids(bundle)
    res = beam_search(bundle, prefix.prefill(bundle, ids), BeamSettings(num_beams=3, max_new_tokens=12),
                      with_greedy=False)
    out = bundle.model.generate(torch.tensor([ids]), num_beams=3, do_sample=False, max_new_tokens=12,
                                length_penalty=1.0, return_dict_in_generate=True, output_scores=True,
                                pad_token_id=bundle.pad_id)
    tokens = out.sequences[0, len(ids):].tolist()
    while tokens and tokens[-1] == bundle.pad_id and bundle.pad_id not in bundle.eos_token_ids:
        tokens.pop()
    assert res.best.token_ids == tokens and res.best.length == len(tokens)
    assert res.best.score == pytest.approx(float(out.sequences_scores[0]), abs=1e-4)


# ---------------------------------------------------------------- batched = solo
@FAMILIES
def test_one_batched_pass_gives_each_row_its_solo_logits(name):
    """Rows of different lengths (some past the window, some not) in one pass, then a second pass."""
    bundle = zoo.bundle(name)
    prompts = ["The cat sat on the mat. The dog sat on the log. A bird", "Once upon a time", "def add(a, b):"]
    caches, solo_caches, tokens = [], [], []
    for prompt in prompts:
        cache = decode.new_cache(bundle)
        logits = decode.forward(bundle, _prompt_ids(bundle, prompt), cache).logits[0]
        caches.append(cache)
        solo_caches.append(decode.copy_cache(cache, bundle))
        tokens.append(int(torch.argmax(logits)))
    for _ in range(2):
        out, _ = batched_decode(bundle, caches, tokens)
        solo = [decode.forward(bundle, [[t]], c).logits[0] for t, c in zip(tokens, solo_caches)]
        assert len(out) == len(solo) == len(prompts)
        for mine, alone in zip(out, solo):
            torch.testing.assert_close(mine, alone, atol=1e-4, rtol=1e-4)
        assert [c.get_seq_length() for c in caches] == [c.get_seq_length() for c in solo_caches]
        tokens = [int(torch.argmax(x)) for x in solo]


# ---------------------------------------------------------------- cache bytes = the spec's formula
@FAMILIES
def test_measured_cache_bytes_equal_the_spec(name):
    bundle = zoo.bundle(name)
    s = Session(bundle, "Once upon a time")
    s.prefill()
    lengths = [s.cache_len]
    assert s.cache_bytes == bundle.spec.cache_bytes(s.cache_len)
    for rec in s.generate(N, SAMPLED):
        assert rec.cache_bytes == bundle.spec.cache_bytes(rec.cache_len)
        lengths.append(rec.cache_len)
    assert lengths == list(range(lengths[0], lengths[0] + len(lengths)))
    per_layer_position = 2 * bundle.spec.n_kv_heads * bundle.spec.head_dim * 4
    kept = [min(s.cache_len, w - 1) if w else s.cache_len for w in bundle.spec.layer_windows]
    assert s.cache_bytes == per_layer_position * sum(kept)


def test_a_sliding_cache_stops_growing_at_its_window_and_a_full_one_does_not():
    spec = zoo.bundle("mistral").spec
    assert spec.layer_windows == (zoo.WINDOW, zoo.WINDOW)
    per_position = spec.cache_bytes_per_position
    assert spec.cache_bytes(zoo.WINDOW - 2) == per_position * (zoo.WINDOW - 2)
    assert spec.cache_bytes(zoo.WINDOW - 1) == per_position * (zoo.WINDOW - 1)
    assert spec.cache_bytes(zoo.WINDOW) == spec.cache_bytes(100) == per_position * (zoo.WINDOW - 1)
    gemma = zoo.bundle("gemma2").spec
    assert gemma.layer_windows == (zoo.WINDOW, None) and gemma.sliding_layers == (0,)
    assert gemma.cache_bytes(101) - gemma.cache_bytes(100) == per_position / 2  # only the global layer grows
    assert zoo.bundle("llama").spec.cache_bytes(100) == 100 * zoo.bundle("llama").spec.cache_bytes_per_position


# ---------------------------------------------------------------- attention = eager attention's
@FAMILIES
def test_captured_attention_equals_eager_attention(name):
    bundle = zoo.bundle(name)
    assert supports_attention(bundle.model) and unsupported_reason(bundle.model) == ""
    s = Session(bundle, PROMPT, capture_attention=True)
    s.generate(2 * zoo.WINDOW, GREEDY)
    reference = _eager_attentions(name, s.ids[:s.cache_len])
    P = s.prompt_len
    assert reference.shape[-1] == s.cache_len > zoo.WINDOW + P
    torch.testing.assert_close(s.prefill_record.attention.float(), reference[:, :, :P, :P], atol=1e-3, rtol=0)
    for i, rec in enumerate(s.records):
        pos = P + i
        assert rec.attention.shape == (bundle.spec.n_layers, bundle.spec.n_heads, pos + 1)
        torch.testing.assert_close(rec.attention.float(), reference[:, :, pos, :pos + 1], atol=1e-3, rtol=0)
    full = rows.compute_full_attention(s)
    torch.testing.assert_close(full, reference, atol=1e-5, rtol=1e-4)
    z, sources = rows.triangle(s, layer=0, head=None)
    assert z.shape == (s.cache_len, s.cache_len) and set(sources) == {rows.PREFILL, rows.DECODE}


def test_a_sliding_layer_gives_keys_outside_its_window_exactly_zero():
    s = Session(zoo.bundle("gemma2"), PROMPT, capture_attention=True)
    s.generate(2 * zoo.WINDOW, GREEDY)
    row = s.records[-1].attention.float()  # [layers, heads, positions]
    pos = row.shape[-1] - 1
    assert (row[0, :, :pos - zoo.WINDOW + 1] == 0).all()  # layer 0 slides: the window ends at the query
    assert (row[0, :, pos - zoo.WINDOW + 1:] > 0).all()
    assert (row[1, :, :pos - zoo.WINDOW + 1] > 0).any(dim=-1).all()  # layer 1 is global: every head looks
    torch.testing.assert_close(row.sum(dim=-1), torch.ones(row.shape[:2]), atol=1e-2, rtol=0)  # further back


# ---------------------------------------------------------------- undo then step = step
@FAMILIES
@pytest.mark.parametrize("config", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_undo_then_step_equals_step(name, config):
    bundle = zoo.bundle(name)
    s = Session(bundle, PROMPT)
    s.generate(N, config)
    ids, logits = list(s.ids), s.pending_logits.clone()
    back = min(5, len(s.records))
    for _ in range(back):
        s.undo()
    assert s.cache_len == len(s.ids) == len(ids) - back
    s.generate(back, config)
    assert s.ids == ids
    assert s.cache_len == len(ids)
    torch.testing.assert_close(s.pending_logits, logits, atol=1e-4, rtol=1e-4)
    assert s.cache_bytes == bundle.spec.cache_bytes(s.cache_len)


def test_undo_past_the_window_after_many_steps_rebuilds_the_cache_exactly():
    """40 steps past the window, then undo further back than the kept logits reach."""
    from autoreg_core.engine.session import FULL_LOGITS_KEPT

    bundle = zoo.bundle("mistral")
    s = Session(bundle, PROMPT)
    s.generate(FULL_LOGITS_KEPT + 8, GREEDY)
    assert not decode.can_crop(s.cache, 1)
    reference = Session(bundle, PROMPT)
    reference.generate(FULL_LOGITS_KEPT + 8 - 12, GREEDY)
    for _ in range(12):
        s.undo()
    assert s.ids == reference.ids and s.cache_len == reference.cache_len
    torch.testing.assert_close(s.pending_logits, reference.pending_logits, atol=1e-4, rtol=1e-4)
    for mine, theirs in zip(s.cache.layers, reference.cache.layers, strict=True):
        torch.testing.assert_close(mine.keys, theirs.keys, atol=1e-4, rtol=1e-4)


def test_a_cache_copy_keeps_counting_positions_past_the_window():
    bundle = zoo.bundle("mistral")
    cache = decode.new_cache(bundle)
    ids = _prompt_ids(bundle, "The cat sat on the mat. The dog sat on the log.")
    decode.forward(bundle, ids, cache)
    copy = decode.copy_cache(cache, bundle)
    assert copy.get_seq_length() == cache.get_seq_length() == len(ids) > zoo.WINDOW
    a = decode.forward(bundle, [5], cache).logits[0]
    b = decode.forward(bundle, [5], copy).logits[0]
    assert torch.equal(a, b)


def test_crop_to_crops_when_it_can_and_rebuilds_when_it_cannot():
    llama, mistral = zoo.bundle("llama"), zoo.bundle("mistral")
    ids = _prompt_ids(llama, "The cat sat on the mat. The dog sat on the log.")
    for bundle, rebuilt in ((llama, False), (mistral, True)):
        cache = decode.new_cache(bundle)
        decode.forward(bundle, ids, cache)
        logits = decode.crop_to(bundle, cache, ids[:-3])
        assert cache.get_seq_length() == len(ids) - 3
        assert (logits is not None) == rebuilt
        expected = decode.forward(bundle, ids[:-3], decode.new_cache(bundle)).logits[0]
        if logits is not None:
            torch.testing.assert_close(logits, expected)
        torch.testing.assert_close(decode.forward(bundle, ids[-3:-2], cache).logits[0],
                                   decode.forward(bundle, ids[:-2], decode.new_cache(bundle)).logits[0],
                                   atol=1e-4, rtol=1e-4)
    short = decode.new_cache(mistral)
    decode.forward(mistral, ids[:zoo.WINDOW - 1], short)
    assert decode.can_crop(short, 1)  # below the window: nothing dropped yet
    decode.forward(mistral, ids[zoo.WINDOW - 1:zoo.WINDOW], short)
    assert not decode.can_crop(short, 1)  # at the window: the oldest key is gone


# ---------------------------------------------------------------- the lessons' computations on every family
@FAMILIES
def test_speculation_with_an_early_exit_draft_writes_greedy_text(name):
    bundle = zoo.bundle(name)
    ids = _prompt_ids(bundle)
    draft = sd.early_exit(bundle, 1)
    out = sd.speculate(bundle, ids, draft, 3, N, GREEDY)
    plain = bundle.model.generate(torch.tensor([ids]), max_new_tokens=N, do_sample=False, pad_token_id=bundle.pad_id)
    assert out.tokens == plain[0, len(ids):].tolist()
    assert 0 < sum(r.accepted for r in out.rounds) < sum(len(r.drafted) for r in out.rounds)  # not the full model


@FAMILIES
def test_an_early_exit_runs_only_its_first_layers(name):
    """The view's logits are the logit lens's reading after layer 1 (the final norm and LM head on it)."""
    bundle = zoo.bundle(name)
    ids = _prompt_ids(bundle)
    view = sd.early_exit_bundle(bundle, 1)
    fwd = decode.forward(bundle, ids, decode.new_cache(bundle), hidden_states=True)
    lens = logit_lens.layer_logits(bundle, fwd.hidden_states)
    early = decode.forward(view, ids, decode.new_cache(view)).logits[0]
    torch.testing.assert_close(early, lens[1], atol=1e-4, rtol=1e-4)
    assert not torch.allclose(early, fwd.logits[0], atol=1e-2)


@FAMILIES
def test_the_cached_keys_are_exact_and_rotated_where_the_family_rotates(name):
    bundle = zoo.bundle(name)
    s = Session(bundle, PROMPT)
    s.generate(N, GREEDY)
    check = kv_exactness.recompute_check(bundle, s)
    assert check.layers == bundle.spec.n_layers and check.relative < 1e-5
    ids = s.ids[:20]
    if bundle.spec.positions == ROTARY:
        key = rope.check_cached_key(bundle, ids, 5, layer=bundle.spec.n_layers - 1)
        assert key.gap < 1e-5 < key.gap_unrotated and key.gap_other_position > 1e-5
    else:
        with pytest.raises(ValueError, match="learned position vector"):
            rope.check_cached_key(bundle, ids, 5)


def test_the_fp8_cache_row_is_left_out_only_for_sliding_models():
    for name in zoo.FAMILIES:
        has_fp8 = precision.FP8_CACHE in precision.variants_for(zoo.bundle(name))
        assert has_fp8 == (name not in zoo.SLIDING), name
