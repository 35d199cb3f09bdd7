"""Guess scoring: first token, the likelier spelling (with or without a leading space), prob, rank, points."""
import math

import pytest
import torch

from autoreg_core.experiments.guess_score import GuessError, points, rank_of, score_guess


def _probs(tiny, favourite: int, p: float = 0.5) -> torch.Tensor:
    vocab = tiny.spec.vocab
    probs = torch.full((vocab,), (1 - p) / (vocab - 1))
    probs[favourite] = p
    return probs


def test_points_follow_surprisal_in_bits():
    assert [points(p) for p in (1.0, 0.5, 0.25, 2 ** -10, 2 ** -20, 0.0)] == [100.0, 90.0, 80.0, 0.0, 0.0, 0.0]
    assert points(0.415) == round(100 - 10 * -math.log2(0.415), 1)


def test_the_spelling_the_model_prefers_is_scored(tiny):
    tok = tiny.tokenizer
    spaced = tok.encode(" the", add_special_tokens=False)
    bare = tok.encode("the", add_special_tokens=False)
    assert spaced[0] != bare[0]
    probs = _probs(tiny, spaced[0], 0.5)
    g = score_guess(tok, probs, "the")
    assert (g.token, g.spaced, g.prob, g.rank, g.score) == (spaced[0], True, 0.5, 1, 90.0)
    assert g.tokens == len(spaced) and g.text == "the"
    probs = _probs(tiny, bare[0], 0.25)
    g = score_guess(tok, probs, "the")
    assert (g.token, g.spaced, g.rank, g.score) == (bare[0], False, 1, 80.0)


def test_a_guess_of_several_tokens_is_scored_by_its_first(tiny):
    tok = tiny.tokenizer
    ids = tok.encode(" the village", add_special_tokens=False)
    assert len(ids) > 1
    g = score_guess(tok, _probs(tiny, ids[0], 0.5), "the village")
    assert g.token == ids[0] and g.tokens == len(ids) and g.spaced


def test_rank_counts_tokens_strictly_more_likely():
    probs = torch.tensor([0.1, 0.4, 0.4, 0.05, 0.05])
    assert [rank_of(probs, i) for i in range(5)] == [3, 1, 1, 4, 4]


@pytest.mark.parametrize("text", ["", "   ", "x" * 41])
def test_bad_guesses_say_why(tiny, text):
    with pytest.raises(GuessError):
        score_guess(tiny.tokenizer, _probs(tiny, 5), text)
