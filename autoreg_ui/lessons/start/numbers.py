"""The Start here page's numbers: every answer of its quiz computed by the engine, never typed in."""
from __future__ import annotations

import torch

from autoreg_core.cache import positions_processed
from autoreg_core.spec import PRESETS, ModelSpec
from autoreg_core.speculative import accept_probability

GQA_70B = "70B model with GQA, 4K tokens"


def quiz_numbers() -> dict[str, float]:
    """What the quiz's answers quote: counts from ``ModelSpec`` and ``cache``, the accept rule from ``speculative``."""
    big = PRESETS[GQA_70B]
    probs, draft = torch.tensor([0.3, 0.7]), torch.tensor([0.6, 0.4])  # target p and draft q of token 0
    return {
        "naive_1000": ModelSpec.positions_total(1000, cached=False),
        "cached_1000": ModelSpec.positions_total(1000, cached=True),
        "naive_50_100": positions_processed(50, 100, cached=False),
        "cached_50_100": positions_processed(50, 100, cached=True),
        "gqa_70b_bytes": big.cache_bytes(),
        "mha_70b_bytes": big.without_gqa().cache_bytes(),
        "gqa_70b_layers": big.n_layers,
        "gqa_70b_kv_heads": big.n_kv_heads,
        "gqa_70b_heads": big.n_heads,
        "gqa_70b_head_dim": big.head_dim,
        "gqa_70b_positions": big.seq_len,
        "accept_p03_q06": accept_probability(probs, draft, 0),
    }
