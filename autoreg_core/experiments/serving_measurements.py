"""The serving lesson's measured runs: decode-step time over batch sizes, one queue served with static and with
continuous batching, speculative decoding with each draft on two prompts, and the model stored at each precision.

Each ``*_work`` returns the work a measuring gate runs: ``work(found, should_stop)`` fills ``found.result`` as it
goes (so a Stop keeps what was measured) and returns whether it finished. ``found`` is any object with a
``result`` attribute; ``on_progress(fraction, what)`` hears how far it got. Nothing here knows the app.
"""
from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import precision
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments import speculative_decoding as speculative

Progress = Callable[[float, str], None]  # (fraction done, what is being measured)


class Found(Protocol):
    """Where a run keeps what it measured so far."""

    result: Any
CONTEXT_TEXT = ("The river runs past the old mill, under the stone bridge and on towards the sea, where the "
                "fishing boats wait for the tide. ")
QUEUE_PROMPTS = ("The cat sat on the", "Once upon a time, in a small village by the sea, there lived",
                 "The capital of France is", "def fibonacci(n):",
                 "Write a short note to a friend about the weather today.", "Water boils at",
                 "The three primary colours are", "To make a cup of tea, first")
ANSWER_SHARES = (1.0, 0.15, 0.5, 0.8, 0.25, 0.6, 0.1, 0.4)  # each request asks for this share of the longest
COPY_TEXT = ("The river runs past the old mill, under the stone bridge and on towards the sea, where the fishing "
             "boats wait for the tide and the gulls circle over the harbour wall.")
SPEC_PROMPTS = {  # one where the answer repeats the context (prompt lookup's case), one where it does not
    "copying a text": f"Copy the text exactly.\nText: {COPY_TEXT}\nCopy: The river runs",
    "open-ended": "Once upon a time, in a small village by the sea,",
}
PRECISION_TEXT = ("The history of the printing press begins in the fifteenth century, when Johannes Gutenberg "
                  "combined movable metal type, oil-based ink and a wooden press adapted from those used for "
                  "wine. Within fifty years printers were at work in more than two hundred European cities, and "
                  "the price of books fell sharply.")
DIAL_BITS = (8, 6, 5, 4, 3, 2)


def _ids(bundle, text: str, limit: int | None = None) -> list[int]:
    ids = list(bundle.tokenizer(text)["input_ids"])
    return ids[:limit] if limit else ids


def generator(config: SamplingConfig) -> torch.Generator:
    """A generator seeded from the settings, so a run can be repeated draw for draw."""
    return torch.Generator().manual_seed(int(config.seed))


def context_length(bundle) -> int:
    return min(batching.DEFAULT_CONTEXT, bundle.spec.max_positions // 2)


def batching_work(bundle, largest: int, on_progress: Progress):
    """Decode-step time at every batch size up to ``largest`` (see ``batching.sweep``)."""
    def work(found: Found, should_stop: Callable[[], bool]) -> bool:
        sizes = batching.batch_sizes(largest)
        ids = batching.context_ids(bundle, CONTEXT_TEXT, context_length(bundle))

        def point(sweep: batching.BatchSweep) -> None:
            found.result, last = sweep, sweep.points[-1]
            on_progress(len(sweep.points) / len(sizes), f"batch {last.batch}: {last.step_ms:,.0f} ms per step")

        found.result = batching.sweep(bundle, ids, sizes, on_point=point, should_stop=should_stop)
        return not found.result.stopped_early
    return work


def demo_queue(bundle, n: int, longest: int) -> list[scheduler.Request]:
    """``n`` requests with prompts of different lengths, each asking for a share of ``longest`` tokens."""
    if not 1 <= n <= scheduler.MAX_REQUESTS:
        raise ValueError(f"Queue 1 to {scheduler.MAX_REQUESTS} requests; got {n}.")
    if not 1 <= longest <= scheduler.MAX_NEW:
        raise ValueError(f"The longest answer must be 1 to {scheduler.MAX_NEW} tokens; got {longest}.")
    return [scheduler.Request(i, tuple(_ids(bundle, QUEUE_PROMPTS[i % len(QUEUE_PROMPTS)])),
                              max(1, round(longest * ANSWER_SHARES[i % len(ANSWER_SHARES)]))) for i in range(n)]


def serving_work(bundle, n: int, slots: int, longest: int, on_progress: Progress):
    """The same queue served with static batches, then continuously (greedy)."""
    def work(found: Found, should_stop: Callable[[], bool]) -> bool:
        requests = demo_queue(bundle, n, longest)
        asked = sum(r.max_new for r in requests)
        found.result = {}
        for i, policy in enumerate(scheduler.POLICIES):
            def step(run: scheduler.ServeRun, i=i, policy=policy) -> None:
                found.result[policy] = run
                on_progress((i + run.generated / asked) / 2, f"{policy} batching: step {len(run.step_end_ms)}")

            found.result[policy] = scheduler.serve(bundle, requests, slots, policy, on_step=step,
                                                   should_stop=should_stop)
        return all(run.done for run in found.result.values())
    return work


@dataclass
class SpecCase:
    """One prompt: plain decoding, then each draft, on the same settings."""

    label: str
    prompt_ids: list[int]
    plain: speculative.Decoded | None = None
    runs: list[speculative.Speculated] | None = None


def default_exit_layer(spec) -> int:
    """Four fifths of the way up: earlier exits were measured to agree with the model almost never."""
    return max(1, min(spec.n_layers - 1, round(spec.n_layers * 0.8)))


def draft_makers(bundle, layers: int, other_models: dict | None = None) -> dict[str, Callable]:
    """Every draft the page offers, as a function making a fresh one (a model draft has its own cache)."""
    makers = {speculative.PROMPT_LOOKUP: lambda: speculative.PromptLookup(2),
              speculative.EARLY_EXIT: lambda: speculative.early_exit(bundle, layers)}
    for name, draft_bundle in (other_models or {}).items():
        makers[name] = lambda b=draft_bundle, n=name: speculative.ModelDraft(speculative.same_tokenizer(bundle, b), n)
    return makers


def speculative_work(bundle, drafts: list[str], layers: int, k: int, max_new: int, config: SamplingConfig,
                     on_progress: Progress, other_models: dict | None = None):
    """Both prompts: plain decoding, then every chosen draft, each with a generator seeded the same way."""
    def work(found: Found, should_stop: Callable[[], bool]) -> bool:
        speculative.check_draft_length(k)
        makers = draft_makers(bundle, layers, other_models)
        found.result, total, n = [], len(SPEC_PROMPTS) * (1 + len(drafts)), 0
        for label, text in SPEC_PROMPTS.items():
            case = SpecCase(label, _ids(bundle, text), runs=[])
            found.result.append(case)
            on_progress(n / total, f"“{label}”: plain decoding")
            case.plain = speculative.plain_decode(bundle, case.prompt_ids, max_new, config, generator(config),
                                                  should_stop=should_stop)
            for name in drafts:
                n += 1

                def progress(run: speculative.Speculated, n=n, name=name, label=label) -> None:
                    on_progress(n / total, f"“{label}”: {name}, k = {k}: {len(run.tokens)} tokens, "
                                           f"{run.accepted} of {run.drafted} guesses kept so far")

                case.runs.append(speculative.speculate(bundle, case.prompt_ids, makers[name](), k, max_new, config,
                                                       generator(config), on_round=progress, should_stop=should_stop))
            n += 1
        return not should_stop()
    return work


def _precision_inputs(bundle) -> tuple[list[int], list[int]]:
    text = _ids(bundle, PRECISION_TEXT, bundle.spec.max_positions - 1)
    return batching.context_ids(bundle, CONTEXT_TEXT, context_length(bundle)), text


def precision_work(bundle, on_progress: Progress):
    """Every way of storing the model, built, measured against float32 and dropped again."""
    def work(found: Found, should_stop: Callable[[], bool]) -> bool:
        prompt_ids, text_ids = _precision_inputs(bundle)
        reference = precision.text_logits(bundle, text_ids)
        found.result = []
        variants = precision.variants_for(bundle)
        for i, variant in enumerate(variants):
            if should_stop():
                return False
            on_progress(i / len(variants), f"building and measuring {variant}…")
            found.result.append(precision.measure(bundle, variant, prompt_ids, text_ids, reference))
            gc.collect()
        return True
    return work


def dial_work(bundle, block: int | None, on_progress: Progress):
    """Quality with the layers' weights rounded to each bit width of ``DIAL_BITS``."""
    def work(found: Found, should_stop: Callable[[], bool]) -> bool:
        _, text_ids = _precision_inputs(bundle)
        reference = precision.text_logits(bundle, text_ids)
        found.result = []
        for i, bits in enumerate(DIAL_BITS):
            if should_stop():
                return False
            on_progress(i / len(DIAL_BITS), f"rounding the weights to {bits} bits…")
            found.result.append((bits, precision.dial(bundle, bits, block, text_ids, reference)))
            gc.collect()
        return True
    return work
