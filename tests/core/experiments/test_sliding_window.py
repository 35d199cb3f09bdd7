"""The sliding-window cache: equal to the full cache when the window covers everything, bounded otherwise."""
from __future__ import annotations

import pytest
import torch
from transformers.cache_utils import DynamicSlidingWindowLayer

from autoreg_core.experiments import sliding_window as window

PROMPT = "The cat sat on the mat. Once upon a time there was"


def _ids(bundle) -> list[int]:
    return bundle.tokenizer(PROMPT)["input_ids"]


def test_a_window_covering_the_sequence_changes_nothing(tiny):
    ids, n = _ids(tiny), 16
    compared = window.compare_window(tiny, ids, n, window=len(ids) + n)
    assert compared.windowed.ids == compared.full.ids
    assert len(compared.windowed.generated_ids) == len(compared.full.generated_ids) == n
    assert compared.windowed.cache_positions == compared.full.cache_positions
    assert compared.windowed.cache_bytes == compared.full.cache_bytes
    assert compared.diverges_at is None


def test_a_small_window_never_holds_more_than_w_minus_one_positions(tiny):
    ids, n, w = _ids(tiny), 16, 4
    compared = window.compare_window(tiny, ids, n, window=w)
    held = compared.windowed.cache_positions
    assert len(held) == n and held == [w - 1] * n  # the prompt is longer than the window
    assert compared.windowed.cache_bytes == [tiny.spec.cache_bytes(w - 1)] * n
    assert compared.full.cache_positions == list(range(len(ids), len(ids) + n))


def test_the_window_is_a_banded_attention_mask(tiny):
    """One pass with an explicit mask (prompt: causal; later queries: only the last W positions) picks
    exactly the tokens the windowed run picked; the full cache picks others."""
    ids, n, w = _ids(tiny), 20, 4
    compared = window.compare_window(tiny, ids, n, window=w)
    text, P = compared.windowed.ids, len(ids)
    T = len(text)
    q, k = torch.arange(T).view(-1, 1), torch.arange(T).view(1, -1)
    allowed = (k <= q) & ((q < P) | (k > q - w))
    with torch.inference_mode():
        logits = tiny.model(torch.tensor([text]), attention_mask=allowed.view(1, 1, T, T)).logits[0]
    assert logits[P - 1:T - 1].argmax(-1).tolist() == compared.windowed.generated_ids
    assert compared.diverges_at is not None


def test_sliding_cache_layers(tiny):
    cache = window.sliding_cache(tiny, 8)
    assert len(cache.layers) == tiny.spec.n_layers
    assert all(isinstance(layer, DynamicSlidingWindowLayer) and layer.sliding_window == 8 for layer in cache.layers)
    assert not hasattr(tiny.config, "sliding_window") or tiny.config.sliding_window is None  # a copy was changed
    with pytest.raises(ValueError):
        window.sliding_cache(tiny, 1)


@pytest.mark.parametrize("a, b, expected", [
    ([1, 2, 3], [1, 2, 3], None), ([1, 2, 3], [1, 5, 3], 1), ([1, 2], [1, 2, 3], 2), ([], [], None), ([4], [5], 0)])
def test_first_difference(a, b, expected):
    assert window.first_difference(a, b) == expected
