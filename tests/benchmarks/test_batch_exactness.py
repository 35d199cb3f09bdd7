"""bench/batch_exactness.py: batched against solo logits, measured; on the embedded model within a bound that can
fail."""
import pytest
import torch

from bench import batch_exactness

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_measure_compares_every_step_and_counts_rows(tiny):
    report = batch_exactness.measure(tiny, steps=6, gather_ms=20.0)
    steps = [batch_exactness.steps_of(i, 6) for i in range(8)]
    assert report["tabs"] == 8 and report["steps_per_tab"] == steps and report["steps_compared"] == sum(steps)
    assert len(set(report["prompt_tokens"])) == 8  # prompts of different lengths: passes pad
    assert sum(rows * n for rows, n in report["rows_per_pass"].items()) == sum(steps)  # every step in one pass
    assert set(report["largest_abs_difference_by_rows"]) == set(report["rows_per_pass"])
    assert report["passes"] == sum(report["rows_per_pass"].values())
    assert report["steps_in_shared_passes"] > 0  # some passes really carried several tabs
    assert report["largest_abs_logit_difference"] < 1e-4 and report["greedy_tokens_agree"]
    assert not report["any_argmax_differed"]


def test_the_measure_sees_a_batched_pass_that_drifts(tiny):
    """A batched pass whose logits are off by 0.01 is reported as such (the measure can fail)."""
    from autoreg_core.runtime.batcher import timed_batched_decode

    def drifting(bundle, caches, tokens):
        logits, timing = timed_batched_decode(bundle, caches, tokens)
        return [row + 0.01 * torch.linspace(-1, 1, row.numel()) for row in logits], timing

    report = batch_exactness.measure(tiny, steps=3, gather_ms=20.0, pass_fn=drifting)
    assert report["largest_abs_logit_difference"] == pytest.approx(0.01, rel=0.05)
    assert report["steps_bit_identical"] == 0


@pytest.mark.integration
def test_on_the_embedded_model_a_batched_pass_is_within_1e_3_of_a_solo_pass(embedded):
    report = batch_exactness.measure(embedded, steps=16)
    assert report["steps_in_shared_passes"] > 0 and max(report["rows_per_pass"]) > 1
    assert report["largest_abs_logit_difference"] < batch_exactness.TOLERANCE, report
    assert report["greedy_tokens_agree"] and not report["any_argmax_differed"], report
