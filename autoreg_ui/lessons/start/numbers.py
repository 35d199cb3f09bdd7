"""The Start here page's numbers: every answer of its quiz computed by the engine, never typed in."""
from __future__ import annotations

import torch

from autoreg_core import SamplingConfig
from autoreg_core.engine.decode import logprob_of, process
from autoreg_core.engine.kv_cache import positions_processed
from autoreg_core.engine.model_spec import ModelSpec

CHAIN = (0.5, 0.4, 0.5)  # the chosen tokens' probabilities at three steps (each step: the token and the rest)
TOP_P, TOP_P_PROBS = 0.5, (0.4, 0.3, 0.2, 0.1)


def quiz_numbers() -> dict[str, float | str]:
    """What the quiz's answers quote: counts from ``ModelSpec`` and ``cache``, log-probs and the top-p stage
    from the sampling pipeline (``decode``), the same code the pages run."""
    chain_logp = sum(logprob_of(torch.tensor([p, 1.0 - p]).log(), 0) for p in CHAIN)
    pipeline = process(torch.tensor(TOP_P_PROBS).log(), [], SamplingConfig(top_p=TOP_P))
    kept = [round(float(p), 3) for p in pipeline.probs if p > 0]
    mass = sum(p for p, k in zip(TOP_P_PROBS, pipeline.probs) if k > 0)
    return {
        "naive_1000": ModelSpec.positions_total(1000, cached=False),
        "cached_1000": ModelSpec.positions_total(1000, cached=True),
        "naive_50_100": positions_processed(50, 100, cached=False),
        "cached_50_100": positions_processed(50, 100, cached=True),
        "chain_logp": chain_logp,
        "chain_p": round(float(torch.tensor(chain_logp).exp()), 6),
        "chain_product": " × ".join(f"{p:g}" for p in CHAIN),
        "top_p_kept": pipeline.kept,
        "top_p_mass": round(mass, 6),
        "top_p_probs": " and ".join(f"{p:g}" for p in kept),
    }
