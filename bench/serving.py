"""The serving page's measurements as bench figures: batching curve, static vs continuous batching,
speculative decoding and precision — the same work functions the page runs, printed as JSON rows.

    python -m bench --serving

Torch runs on one thread here (``--threads`` to change): on a shared 2-core machine two threads
thrash (a one-row decode step measured 262 ms with 2 threads against 56 ms with 1 under load).
"""
from __future__ import annotations

import torch

from autoreg_core import SamplingConfig
from autoreg_core.experiments import kv_cost as cost
from autoreg_core.experiments import serving_measurements as measurements
from autoreg_ui import measuring
from autoreg_ui.lessons.serving import controller as serving


def _run(bundle, label: str, work) -> measuring.Measured:
    found = measuring.measure({}, label, label, (bundle.name,), work)
    if found.failed or found.result is None:
        raise RuntimeError(f"{label}: the measurement failed")
    return found


def measure_serving(bundle, threads: int = 1, largest_batch: int = 32) -> dict:
    """Every serving figure once, with the machine's state around it."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    quiet = lambda fraction, text: None  # noqa: E731 - no progress bar in a bench
    try:
        bandwidth = cost.measure_bandwidth(bundle.device)
        batching = _run(bundle, "batching", measurements.batching_work(bundle, largest_batch, quiet))
        queue = _run(bundle, "static vs continuous", measurements.serving_work(bundle, 10, 4, 32, quiet))
        spec = _run(bundle, "speculative", measurements.speculative_work(
            bundle, ["prompt lookup", "early exit"], measurements.default_exit_layer(bundle.spec), 4, 48,
            SamplingConfig(temperature=0), quiet))
        precision = _run(bundle, "precision", measurements.precision_work(bundle, quiet))
    finally:
        torch.set_num_threads(before)
    return {"torch_threads": threads, "copy_bandwidth_gib_s": round(bandwidth / 2**30, 2),
            "load_avg_at_end": cost.load_average(),
            "batching": serving.batching_rows(batching.result, bundle.spec, bandwidth),
            "static_vs_continuous": serving.serving_rows(queue.result),
            "speculative": serving.speculative_rows(spec.result),
            "precision": [{k: v for k, v in row.items() if k != "greedy continuation"}
                          for row in serving.precision_rows(precision.result, bandwidth, bundle.tokenizer)]}
