"""The serving page's controller: what each experiment measures (the work handed to the measuring
gate, ``measuring``) and the tables of its results; what the page says about them is ``serving_text``.
Each ``*_work`` fills a ``measuring.Measured`` as it goes, so a Stop click keeps what was measured.
Nothing here draws.
"""
from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.tokens import sequence_text, token_views
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import precision
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments import speculative_decoding as speculative
from autoreg_ui.measuring import Measured, Progress

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
LIVE_EVERY_S = 5.0  # the live panel's refresh: it redraws itself only (a snapshot of the batcher's passes)


def _ids(bundle, text: str, limit: int | None = None) -> list[int]:
    ids = list(bundle.tokenizer(text)["input_ids"])
    return ids[:limit] if limit else ids


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def generator(config: SamplingConfig) -> torch.Generator:
    """A generator seeded from the settings, so a run can be repeated draw for draw."""
    return torch.Generator().manual_seed(int(config.seed))


# ---------------------------------------------------------------- this server, right now
def live_every(auto: bool) -> float | None:
    """How often the live panel redraws itself: every ``LIVE_EVERY_S`` seconds, or never (paused)."""
    return LIVE_EVERY_S if auto else None


# ---------------------------------------------------------------- 1 · batching
def context_length(bundle) -> int:
    return min(batching.DEFAULT_CONTEXT, bundle.spec.max_positions // 2)


def batching_work(bundle, largest: int, on_progress: Progress):
    """Decode-step time at every batch size up to ``largest`` (see ``batching.sweep``)."""
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
        sizes = batching.batch_sizes(largest)
        ids = batching.context_ids(bundle, CONTEXT_TEXT, context_length(bundle))

        def point(sweep: batching.BatchSweep) -> None:
            found.result, last = sweep, sweep.points[-1]
            on_progress(len(sweep.points) / len(sizes), f"batch {last.batch}: {last.step_ms:,.0f} ms per step")

        found.result = batching.sweep(bundle, ids, sizes, on_point=point, should_stop=should_stop)
        return not found.result.stopped_early
    return work


def batching_rows(sweep: batching.BatchSweep, spec, bandwidth: float) -> list[dict]:
    """The measured sweep with its bytes-read account, one row per batch size."""
    one = sweep.point(1)
    rows = []
    for p in sweep.points:
        read = spec.step_bytes(p.context, p.batch)
        rows.append({"batch": p.batch, "ms per step": round(p.step_ms, 1), "tokens/s": round(p.tokens_per_s, 1),
                     "tokens/s ÷ batch 1": round(p.tokens_per_s / one.tokens_per_s, 2) if one else None,
                     "MiB read per step": round(read["total"] / 2**20, 1),
                     "KV cache share of the bytes": f"{read['cache'] / read['total']:.1%}",
                     "bandwidth floor (ms)": round(batching.floor_ms(spec, p.batch, p.context, bandwidth), 1)})
    return rows


# ---------------------------------------------------------------- 2 · static vs continuous batching
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
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
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


def serving_rows(runs: dict[str, scheduler.ServeRun]) -> list[dict]:
    """One row per policy: throughput, time to first token, latency, passes, waste."""
    rows = []
    for policy, run in runs.items():
        done = run.finished()
        ttft, latency = [s.first_token_ms for s in done], [s.done_ms for s in done]
        rows.append({"batching": policy, "requests served": f"{len(done)} of {len(run.requests)}",
                     "tokens": run.generated, "steps": len(run.step_end_ms), "model passes": run.forward_passes,
                     "total (s)": round(run.total_ms / 1000, 2), "tokens/s": round(run.tokens_per_s, 1),
                     "mean time to first token (s)": round(_mean(ttft) / 1000, 2),
                     "worst time to first token (s)": round(max(ttft, default=float("nan")) / 1000, 2),
                     "mean latency (s)": round(_mean(latency) / 1000, 2),
                     "row-steps spent on finished requests": run.wasted_rows})
    return rows


def request_rows(runs: dict[str, scheduler.ServeRun], tokenizer) -> list[dict]:
    """One row per request: what it asked for and got, and when, under each policy."""
    static, continuous = runs.get(scheduler.STATIC), runs.get(scheduler.CONTINUOUS)
    rows = []
    for request in (static or continuous).requests:
        row = {"request": f"r{request.rid}", "prompt": sequence_text(tokenizer, list(request.prompt_ids)),
               "prompt tokens": len(request.prompt_ids), "asked for": request.max_new}
        for policy, run in runs.items():
            served = run.served.get(request.rid)
            row[f"TTFT {policy} (s)"] = round(served.first_token_ms / 1000, 2) if served else None
            row[f"latency {policy} (s)"] = round(served.done_ms / 1000, 2) if served else None
        a, b = (run.served.get(request.rid) if run else None for run in (static, continuous))
        row["same tokens both ways"] = (a.tokens == b.tokens) if a and b and a.finished and b.finished else None
        rows.append(row)
    return rows


# ---------------------------------------------------------------- 3 · speculative decoding
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
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
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


def speculative_rows(cases: list[SpecCase]) -> list[dict]:
    """One row per prompt and decoding: tokens, passes, acceptance, time and speedup against plain."""
    rows = []
    for case in cases:
        if case.plain is None:
            continue
        rows.append({"prompt": case.label, "decoding": "plain", "tokens": len(case.plain.tokens),
                     "model passes": case.plain.forward_passes, "acceptance rate": None, "passes saved": 0,
                     "time (s)": round(case.plain.ms / 1000, 2), "speedup": 1.0, "same tokens as plain": True})
        for run in case.runs or []:
            rows.append({"prompt": case.label, "decoding": f"{run.draft}, k = {run.k}", "tokens": len(run.tokens),
                         "model passes": run.forward_passes,
                         "acceptance rate": f"{run.acceptance_rate:.0%}" if run.drafted else "no guesses",
                         "passes saved": run.passes_saved, "time (s)": round(run.ms / 1000, 2),
                         "speedup": round(case.plain.ms / run.ms, 2),
                         "same tokens as plain": run.tokens == case.plain.tokens})
    return rows


def round_rows(run: speculative.Speculated, tokenizer, limit: int = 60) -> list[dict]:
    """Every round: the guesses, how many the model kept, its own token, and the time of each part."""
    rows = []
    for i, r in enumerate(run.rounds[:limit], start=1):
        guesses = [v.label for v in token_views(tokenizer, r.drafted)]
        model_token = token_views(tokenizer, [r.token])[0].label
        rows.append({"round": i, "drafted": " | ".join(guesses) or "(no guess)",
                     "kept": f"{r.accepted} of {len(r.drafted)}",
                     "kept guesses": " | ".join(guesses[: r.accepted]),
                     "model's token": model_token + (" (bonus)" if r.bonus and r.drafted else ""),
                     "draft ms": round(r.draft_ms, 1), "verify ms": round(r.verify_ms, 1)})
    return rows


# ---------------------------------------------------------------- 4 · precision
def _precision_inputs(bundle) -> tuple[list[int], list[int]]:
    text = _ids(bundle, PRECISION_TEXT, bundle.spec.max_positions - 1)
    return batching.context_ids(bundle, CONTEXT_TEXT, context_length(bundle)), text


def precision_work(bundle, on_progress: Progress):
    """Every way of storing the model, built, measured against float32 and dropped again."""
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
        prompt_ids, text_ids = _precision_inputs(bundle)
        reference = precision.text_logits(bundle, text_ids)
        found.result = []
        for i, variant in enumerate(precision.VARIANTS):
            if should_stop():
                return False
            on_progress(i / len(precision.VARIANTS), f"building and measuring {variant}…")
            found.result.append(precision.measure(bundle, variant, prompt_ids, text_ids, reference))
            gc.collect()
        return True
    return work


def dial_work(bundle, block: int | None, on_progress: Progress):
    """Quality with the layers' weights rounded to each bit width of ``DIAL_BITS``."""
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
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


def precision_rows(rows: list[precision.PrecisionRow], bandwidth: float, tokenizer) -> list[dict]:
    """The precision table: memory measured from the tensors, the decode step against its floor, quality."""
    out = []
    for row in rows:
        floor = row.step_bytes / bandwidth * 1000.0
        out.append({"stored as": row.variant, "weights (MiB)": round(row.weight_bytes / 2**20, 1),
                    "read per step (MiB)": round(row.step_weight_bytes / 2**20, 1),
                    f"KV cache at {row.cache_positions} positions (KiB)": round(row.cache_bytes / 1024, 1),
                    "fastest decode step (ms)": round(row.step_ms, 1), "bandwidth floor (ms)": round(floor, 1),
                    "measured ÷ floor": round(row.step_ms / floor, 1),
                    "KL from float32 (bits)": float(f"{row.quality.kl_bits:.3g}"),
                    "top-1 agreement": f"{row.quality.top1:.0%}", "perplexity": round(row.quality.perplexity, 2),
                    "greedy continuation": sequence_text(tokenizer, row.tokens)})
    return out



