"""Speculative decoding: the accept rule, the drafts, greedy output equal to plain decoding and to
transformers' assisted generation, and sampled tokens distributed as the model's own."""
from __future__ import annotations

import math
import time

import pytest
import torch
from tiny import sentencepiece_tokenizer, tiny_tokenizer, varied_bundle, varied_model
from transformers import GenerationConfig

from autoreg_core import SamplingConfig, bundle_from_model
from autoreg_core.engine import decode
from autoreg_core.experiments import speculative_decoding as speculative

GREEDY = SamplingConfig(temperature=0.0)
PROMPTS = ["The cat sat on the mat. The dog sat on the", "Once upon a time there was a small village by the sea",
           "def add(a, b):\n    return a + b\n\nprint(add("]

pytestmark = pytest.mark.usefixtures("one_thread")


def _ids(bundle, text: str) -> list[int]:
    return bundle.tokenizer(text)["input_ids"]


def generate(bundle, ids: list[int], max_new: int, **assist) -> list[int]:
    """transformers' greedy ``generate``, optionally with its own prompt lookup or early-exit assistant."""
    config = GenerationConfig(max_new_tokens=max_new, do_sample=False, eos_token_id=bundle.eos_token_ids,
                              pad_token_id=bundle.tokenizer.pad_token_id, **assist)
    return bundle.model.generate(torch.tensor([ids]), generation_config=config)[0, len(ids):].tolist()


# ---------------------------------------------------------------- the rule
def test_accept_probability_is_min_one_p_over_q():
    p, q = torch.tensor([0.5, 0.3, 0.2, 0.0]), torch.tensor([0.25, 0.6, 0.0, 0.15])
    assert speculative.accept_probability(p, q, 0) == 1.0
    assert speculative.accept_probability(p, q, 1) == pytest.approx(0.5)
    assert speculative.accept_probability(p, q, 3) == 0.0
    assert speculative.accept_probability(p, q, 2) == 1.0  # the draft never proposes it; nothing to reject


def test_residual_is_max_zero_p_minus_q_normalised():
    p, q = torch.tensor([0.5, 0.3, 0.2, 0.0]), torch.tensor([0.25, 0.6, 0.0, 0.15])
    assert torch.allclose(speculative.residual(p, q), torch.tensor([0.25, 0.0, 0.2, 0.0]) / 0.45)
    assert torch.equal(speculative.residual(p, p), p)


def test_greedy_rule_keeps_the_argmax_and_corrects_to_it_without_random_numbers():
    p, q = speculative.one_hot(2, 5), speculative.one_hot(4, 5)
    generator = torch.Generator().manual_seed(0)
    state = generator.get_state()
    assert speculative.speculative_token(p, p, 2, generator) == (2, True)
    assert torch.equal(generator.get_state(), state)
    assert speculative.speculative_token(p, q, 4, generator) == (2, False)


def _chi_square(counts: torch.Tensor, probs: torch.Tensor) -> tuple[float, int]:
    """Pearson's statistic over the tokens expected ≥ 5 times (the rest pooled), and its degrees of freedom."""
    expected = probs.double() * counts.sum()
    big = expected >= 5
    stat = float(((counts[big] - expected[big]) ** 2 / expected[big]).sum())
    rest_expected, rest = float(expected[~big].sum()), float(counts[~big].sum())
    bins = int(big.sum()) + (rest_expected > 0)
    if rest_expected > 0:
        stat += (rest - rest_expected) ** 2 / rest_expected
    return stat, bins - 1


def _critical(df: int, z: float = 3.719) -> float:
    """Wilson–Hilferty: the chi-square quantile at one-sided normal quantile z (3.719: p = 1e-4)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def test_sampled_tokens_follow_the_models_distribution():
    """Many one-position rounds: draft from q, keep with min(1, p/q), else draw the residual. The
    emitted tokens must be distributed as p (chi-square at p = 1e-4 with a fixed seed), while the
    draft's own tokens, as a check that the test can fail, must not."""
    bundle = varied_bundle()
    ids = _ids(bundle, "The cat sat on the mat. The dog")
    config = SamplingConfig(temperature=4.0, top_k=60)
    p = decode.process(decode.forward(bundle, [ids]).logits[0], ids, config).probs
    draft = speculative.early_exit_bundle(bundle, 1)
    q = decode.process(decode.forward(draft, [ids]).logits[0], ids, config).probs
    assert 0.3 < float(torch.minimum(p, q).sum()) < 0.7  # the draft is right about half the time
    generator, n = torch.Generator().manual_seed(1234), 8000
    emitted, drafted = torch.zeros_like(p, dtype=torch.float64), torch.zeros_like(p, dtype=torch.float64)
    for _ in range(n):
        guess = int(decode.draw(q, generator).token_id)
        token, _ = speculative.speculative_token(p, q, guess, generator)
        emitted[token] += 1
        drafted[guess] += 1
    stat, df = _chi_square(emitted, p)
    assert stat < _critical(df), (stat, df)
    wrong, df_wrong = _chi_square(drafted, p)
    assert wrong > _critical(df_wrong)
    assert float(emitted[p == 0].sum()) == 0.0  # never a token the model's filters removed


# ---------------------------------------------------------------- the drafts
def test_prompt_lookup_copies_what_followed_the_last_ngram():
    draft = speculative.PromptLookup(2)
    context = [5, 6, 7, 8, 9, 1, 5, 6]
    assert draft.propose(context, 3, GREEDY, None).tokens == [7, 8, 9]
    assert draft.propose(context, 8, GREEDY, None).tokens == [7, 8, 9, 1, 5, 6]
    assert draft.propose([1, 2, 3, 4], 3, GREEDY, None).tokens == []


def test_early_exit_view_shares_weights_and_leaves_the_model_alone(tiny):
    view = speculative.early_exit_bundle(tiny, 1)
    assert tiny.model.config.num_hidden_layers == 2 and view.model.config.num_hidden_layers == 1
    assert view.model.lm_head.weight is tiny.model.lm_head.weight
    assert view.model.model.layers[0] is tiny.model.model.layers[0]
    ids = _ids(tiny, "The cat sat on the mat.")
    full = decode.forward(tiny, [ids], hidden_states=True)
    early = tiny.model.lm_head(tiny.model.model.norm(full.hidden_states[1][:, -1]))
    assert torch.allclose(decode.forward(view, [ids]).logits, early, atol=1e-5)
    assert len(decode.new_cache(view).layers) == 1
    assert len(decode.new_cache(tiny).layers) == 2
    with pytest.raises(ValueError, match="1 to 1 of the model's 2 layers"):
        speculative.early_exit_bundle(tiny, 2)


def test_model_draft_keeps_only_the_accepted_context(tiny):
    draft = speculative.early_exit(tiny, 1)
    ids = _ids(tiny, "Once upon a time")
    proposal = draft.propose(ids, 4, GREEDY, None)
    assert len(proposal.tokens) == len(proposal.probs) == 4
    assert draft.cache.get_seq_length() == len(ids) + 3
    draft.keep(len(ids) + 1)
    assert draft.cache.get_seq_length() == len(ids) + 1


def test_a_draft_model_must_share_the_tokenizer(tiny):
    other = bundle_from_model(varied_model(), sentencepiece_tokenizer(), name="other")
    with pytest.raises(ValueError, match="does not share"):
        speculative.same_tokenizer(tiny, other)
    same = bundle_from_model(varied_model(), tiny_tokenizer(), name="same")
    assert speculative.same_tokenizer(tiny, same) is same


# ---------------------------------------------------------------- greedy output is plain decoding's
@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("k", [1, 4, 8])
def test_greedy_speculation_writes_exactly_plain_greedy(prompt, k):
    bundle = varied_bundle()
    ids = _ids(bundle, prompt)
    plain = speculative.plain_decode(bundle, ids, 30, GREEDY)
    assert plain.tokens == generate(bundle, ids, 30) and len(plain.tokens) == 30
    for draft in (speculative.PromptLookup(2), speculative.early_exit(bundle, 1)):
        run = speculative.speculate(bundle, ids, draft, k, 30, GREEDY)
        assert run.tokens == plain.tokens and len(run.tokens) == 30
        assert run.forward_passes == len(run.rounds) + 1
        emitted = [t for r in run.rounds for t in r.emitted]  # the last round may emit past the 30th token
        assert emitted[:29] == run.tokens[1:] and 29 <= len(emitted) <= 29 + k + 1
        assert all(len(r.drafted) <= k and 0 <= r.accepted <= len(r.drafted) for r in run.rounds)


def test_plain_decoding_times_each_later_token_with_its_choice_like_a_round(tiny, monkeypatch):
    """``token_ms`` covers a token's decode pass and the choice of the token (as a round's draft and verify times do);
    ``step_ms`` the pass alone. A slowed-down choice shows in the first, over the second."""
    ids = _ids(tiny, PROMPTS[0])
    choose = decode.choose

    def slow_choose(*args, **kwargs):
        time.sleep(0.02)
        return choose(*args, **kwargs)

    monkeypatch.setattr(decode, "choose", slow_choose)
    plain = speculative.plain_decode(tiny, ids, 6, GREEDY)
    assert len(plain.tokens) == 6 and len(plain.token_ms) == len(plain.step_ms) == 5  # the prefill's token: neither
    assert all(t >= s + 20.0 for t, s in zip(plain.token_ms, plain.step_ms))


def test_prompt_lookup_saves_passes_on_repetitive_output(tiny):
    """The default tiny model repeats itself: lookup guesses are kept and passes are saved."""
    ids = _ids(tiny, PROMPTS[0])
    plain = speculative.plain_decode(tiny, ids, 24, GREEDY)
    run = speculative.speculate(tiny, ids, speculative.PromptLookup(2), 4, 24, GREEDY)
    assert run.tokens == plain.tokens and len(run.tokens) == 24
    assert run.accepted > 0 and run.passes_saved == 24 - run.forward_passes > 0
    assert run.acceptance_rate == run.accepted / run.drafted


@pytest.mark.parametrize("prompt", PROMPTS)
def test_same_as_transformers_assisted_generation(prompt):
    bundle = varied_bundle()
    ids = _ids(bundle, prompt)
    lookup = speculative.speculate(bundle, ids, speculative.PromptLookup(2), 4, 20, GREEDY)
    assert lookup.tokens == generate(bundle, ids, 20, prompt_lookup_num_tokens=4)
    early = speculative.speculate(bundle, ids, speculative.early_exit(bundle, 1), 4, 20, GREEDY)
    assert early.tokens == generate(bundle, ids, 20, assistant_early_exit=1)


def test_eos_ends_speculation_where_it_ends_plain_decoding():
    bundle = bundle_from_model(varied_model(seed=2), tiny_tokenizer(), name="tiny-eos")
    ids = _ids(bundle, PROMPTS[1])
    free_run = speculative.plain_decode(bundle, ids, 20, GREEDY).tokens
    stop = next(t for i, t in enumerate(free_run) if i >= 3 and t not in free_run[:i])
    bundle.model.generation_config.eos_token_id = [bundle.tokenizer.eos_token_id, stop]
    plain = speculative.plain_decode(bundle, ids, 20, GREEDY)
    assert plain.tokens == free_run[: free_run.index(stop) + 1] and plain.done
    for draft in (speculative.PromptLookup(1), speculative.early_exit(bundle, 1)):
        assert speculative.speculate(bundle, ids, draft, 8, 20, GREEDY).tokens == plain.tokens


@pytest.mark.parametrize("k", [0, 9, 2.5])
def test_draft_length_is_bounded(tiny, k):
    with pytest.raises(ValueError, match="from 1 to 8"):
        speculative.speculate(tiny, [1, 2, 3], speculative.PromptLookup(), k, 5, GREEDY)


def test_too_long_a_run_is_refused(tiny):
    with pytest.raises(ValueError, match="1 to 128"):
        speculative.plain_decode(tiny, [1, 2], 129, GREEDY)
    with pytest.raises(ValueError, match="does not fit"):
        speculative.plain_decode(tiny, list(range(200)), 60, GREEDY)


def test_embedded_model_speculates_exactly_its_greedy_output(embedded):
    for prompt in ("Shopping list: apples, pears, bread, milk.\nThe same list again: apples,", "The sun rises"):
        ids = _ids(embedded, prompt)
        expected = generate(embedded, ids, 10)
        for draft in (speculative.PromptLookup(2), speculative.early_exit(embedded, 10)):
            run = speculative.speculate(embedded, ids, draft, 4, 10, GREEDY)
            assert run.tokens == expected and len(run.tokens) == 10
