"""The sampling settings: every clamp said, stop sequences parsed."""
import pytest
import torch

from autoreg_core import SamplingConfig
from autoreg_core.engine.decode import process


@pytest.mark.parametrize("kwargs, fragment", [
    ({"temperature": -1}, "greedy"),
    ({"top_k": 10**6}, "larger than the vocabulary"),
    ({"top_p": 0.0}, "single most likely"),
    ({"min_p": 1.0}, "tied with the most likely"),
    ({"top_p": 1.5}, "clamped"),
    ({"repetition_penalty": 0}, "positive"),
    ({"max_new_tokens": 0}, "clamped"),
])
def test_normalized_explains_every_change(kwargs, fragment):
    cfg, notes = SamplingConfig(**kwargs).normalized(vocab_size=1000)
    assert any(fragment in n for n in notes)
    # transformers' warpers accept the clamped values: the pipeline ends in a distribution
    probs = process(torch.randn(1000), [1, 2, 3], SamplingConfig(**kwargs)).probs
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-5) and int((probs > 0).sum()) >= 1


def test_stop_sequences_parse_escaped_newlines():
    assert SamplingConfig.parse_stop_sequences("\\n\\n\nEnd\n\n") == ("\n\n", "End")
