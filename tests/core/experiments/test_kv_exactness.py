"""The cache-exactness check: recomputed K/V equal the cached ones up to rounding, and a change is caught."""
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments.kv_exactness import recompute_check
from tests import zoo


def test_cached_keys_and_values_equal_a_fresh_pass(tiny):
    s = Session(tiny, "The cat sat on the")
    s.generate(6, SamplingConfig(temperature=0.0))
    check = recompute_check(tiny, s)
    assert check.positions == len(s.ids) == s.cache_len
    assert check.layers == tiny.spec.n_layers == len(check.per_layer)
    assert check.largest_value > 0
    assert check.max_abs_diff < 1e-4 * max(1.0, check.largest_value)
    assert check.compared == (s.cache_len,) * check.layers  # a full model: every position in every layer
    assert check.dtype == "float32" and 0 < check.relative <= check.rounding_bound  # the page's "rounding" side


def test_a_cache_filled_by_the_prefill_alone_is_identical_to_the_fresh_pass(tiny):
    s = Session(tiny, "The cat sat on the mat")
    s.prefill()
    check = recompute_check(tiny, s)
    assert check.positions == len(s.ids) and check.max_abs_diff == 0.0  # the page's "identical" side


@pytest.mark.parametrize("family, windows", [("mistral", (zoo.WINDOW, zoo.WINDOW)), ("gemma2", (zoo.WINDOW, None))])
def test_a_sliding_layer_compares_only_the_positions_it_keeps(family, windows):
    bundle = zoo.bundle(family)
    assert bundle.spec.layer_windows == windows
    s = Session(bundle, "The cat sat on the mat and looked at the door")
    s.generate(3, SamplingConfig(temperature=0.0))
    assert s.cache_len > zoo.WINDOW
    check = recompute_check(bundle, s)
    assert check.compared == tuple(bundle.spec.positions_kept(i, s.cache_len) for i in range(len(windows)))
    assert check.compared == tuple(s.cache_len if w is None else w - 1 for w in windows)
    assert check.max_abs_diff < 1e-4 * max(1.0, check.largest_value)


def test_a_changed_cache_entry_is_caught(tiny):
    s = Session(tiny, "The cat sat on the")
    s.generate(3, SamplingConfig(temperature=0.0))
    import torch

    with torch.inference_mode():  # the cache's tensors are inference tensors
        s.cache.layers[1].values[0, 0, 2, 0] += 0.5
    check = recompute_check(tiny, s)
    assert check.per_layer[1] == pytest.approx(0.5, abs=1e-3)
    assert check.max_abs_diff == check.per_layer[1]
    assert not check.within_rounding  # the page's "larger than rounding" side


def test_an_empty_cache_says_so(tiny):
    s = Session(tiny, "Hi")
    with pytest.raises(ValueError, match="empty"):
        recompute_check(tiny, s)
