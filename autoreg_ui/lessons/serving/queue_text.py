"""What the serving page says of a queue served both ways (static and continuous batching): each direction read
from the measured times, each reason from the schedules both runs made (kept apart from ``text.py``, the lesson's
prose)."""
from __future__ import annotations

from statistics import fmean

from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_ui.lessons.serving.text import TTFT_PARTS


def _mean(values: list[float]) -> float:
    return fmean(values) if values else float("nan")


def join_steps(static: scheduler.ServeRun, continuous: scheduler.ServeRun) -> tuple[int, int, int]:
    """Of the requests both runs served: how many joined the batch at an earlier step under continuous batching,
    how many at a later one, and how many in all (each request's first token comes from the prefill of its join)."""
    both = [(s, continuous.served[rid]) for rid, s in static.served.items() if rid in continuous.served]
    return (sum(c.joined_step < s.joined_step for s, c in both), sum(c.joined_step > s.joined_step for s, c in both),
            len(both))


def _ttft_reason(sooner: bool, earlier: int, later: int, n: int) -> str:
    """Why the first tokens came sooner or later, from the steps at which the requests joined under each policy."""
    if not earlier and not later:
        return ("every request joined the batch at the same step under both policies, so up to each first token "
                "both ran the same model passes: the difference is timing noise")
    if not earlier:
        return f"no request joined the batch at an earlier step, and {later} of {n} at a later one"
    if later:  # some joined earlier, some later: the steps alone do not say which way the mean should go
        return f"{earlier} of {n} requests joined the batch at an earlier step and {later} at a later one"
    if sooner:
        return (f"{earlier} of {n} requests joined the batch at an earlier step: a queued request starts as soon as "
                "any row frees up, not when the whole batch ahead of it is done")
    return (f"{earlier} of {n} requests joined the batch at an earlier step, yet the steps before their first tokens "
            "took longer (likely the prefill pass each join adds, which the running rows wait for; not measured "
            "here)")


def _slower_reason(static: scheduler.ServeRun, continuous: scheduler.ServeRun, won_waiting: bool) -> str:
    """Why continuous batching gave fewer tokens per second, from the passes and the schedules both runs made."""
    said = "Here continuous batching was **slower** in tokens/s"
    if continuous.forward_passes > static.forward_passes:
        saved = static.wasted_rows - continuous.wasted_rows
        return (f"{said}: it made {continuous.forward_passes} model passes against {static.forward_passes}, a "
                f"prefill pass of its own each time requests joined. Each pass likely carries a fixed cost, which "
                f"here outweighed the {saved} row-steps on finished requests it saved"
                + ("; its win in waiting time stays." if won_waiting else "."))
    if continuous.cells == static.cells:
        return (f"{said}, yet both policies ran the very same schedule (every request in the same slot at the same "
                "steps): the gap is timing noise.")
    return (f"{said} with no more model passes ({continuous.forward_passes} against {static.forward_passes}): these "
            "figures do not show where the time went (timing noise, or work between passes such as reshaping the "
            "cache when rows join and leave; not measured here).")


def serving_sentences(runs: dict[str, scheduler.ServeRun]) -> list[str]:
    """The comparison in words, each direction ("faster", "sooner") read from the measured numbers and each reason
    from the schedules both runs made."""
    static, continuous = runs.get(scheduler.STATIC), runs.get(scheduler.CONTINUOUS)
    if not (static and continuous and static.done and continuous.done):
        return []
    ttft = [_mean([s.first_token_ms for s in run.finished()]) for run in (static, continuous)]
    sooner = ttft[1] < ttft[0]
    earlier, later, n = join_steps(static, continuous)
    out = [f"Continuous batching served the queue at **{continuous.tokens_per_s:,.1f} tokens/s** against "
           f"{static.tokens_per_s:,.1f} for static batches, and the first token came after **{ttft[1] / 1000:,.2f} s** "
           f"on average instead of {ttft[0] / 1000:,.2f} s ({'sooner' if sooner else 'later'}; time to first token "
           f"counts from the moment the queue arrived: {TTFT_PARTS}): {_ttft_reason(sooner, earlier, later, n)}. "
           f"Static batching spent {static.wasted_rows} row-steps computing for requests that had already finished."]
    if continuous.tokens_per_s < static.tokens_per_s:
        out.append(_slower_reason(static, continuous, sooner and earlier > 0))
    return out
