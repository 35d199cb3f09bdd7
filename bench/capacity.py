"""Capacity per core: what the class's report reads besides its own timings.

The class's Next token p95 is read against this machine's solo decode step (``bench.lib.reference``), and the
server's CPU per click beyond the model against a bare page of the same shape clicked in the same run
(``bench.lib.server_hooks`` times every script run inside each server); the goals and their verdicts are in
``bench.lib.goals``. Here: the shared prefix cache's counters as the tricks page shows them.
"""
from __future__ import annotations


def prefix_cache_counts(metrics: dict[str, str], labels: tuple[str, ...]) -> dict:
    """The tricks page's prefix-cache metrics (label → shown text) as numbers: hits, misses and the hit rate.

    ``labels``: the page's (hits, misses, saved, held) labels. A missing metric gives None (the page was not shown).
    """
    def count(label: str) -> int | None:
        shown = metrics.get(label)
        return int(shown.replace(",", "")) if shown is not None and shown.replace(",", "").isdigit() else None

    hits, misses = count(labels[0]), count(labels[1])
    looked_up = None if hits is None or misses is None else hits + misses
    return {"shown": dict(metrics), "hits": hits, "misses": misses,
            "hit_rate": round(hits / looked_up, 3) if looked_up else None,
            "prefill_time_saved": metrics.get(labels[2]), "memory_held": metrics.get(labels[3])}
