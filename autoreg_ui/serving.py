"""The serving page's controller: one measurement at a time per server, results kept per tab, and
what the page says about them.

Many students share one server and one model. A measurement here keeps both cores busy for
seconds, so measurements take turns: a process-wide lock lets one run at a time and everyone else
waits in line with a message saying so (the rest of the app keeps answering meanwhile). Results are
kept in the tab's state as they arrive: a Stop click (any click reruns the page and interrupts the
run at its next progress update) keeps what was measured. Every function takes the state as a
mapping (``st.session_state`` on the page, a dict in tests) and never draws anything.
"""
from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import torch

from autoreg_core import batching, cost, precision, scheduler, speculative
from autoreg_core.config import SamplingConfig
from autoreg_core.tokens import sequence_text, token_views

from . import keys, messages

TIME_BUDGET_S = 150.0  # a measurement never runs longer, whatever the machine's load
WAIT_LIMIT_S = 300.0  # how long a click waits in line before giving up
Progress = Callable[[float, str], None]  # (fraction done, what is being measured)

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
GROUPINGS = {f"blocks of {precision.GGUF_BLOCK} (as in GGUF files)": precision.GGUF_BLOCK, "one output row": None}
COLLAPSE_TOP1 = 0.9  # quality has collapsed once fewer than this share of top-1 tokens agree with float32


# ---------------------------------------------------------------- one measurement at a time per server
class Busy(RuntimeError):
    """The line was too long: another measurement kept the model for longer than we wait."""


_GATE = threading.Lock()
_NOW: dict[str, object] = {}  # what is being measured right now: label, since
_LINE = {"waiting": 0}
_LINE_LOCK = threading.Lock()


def running_now() -> str | None:
    """What the server is measuring right now (for the page to say), if anything."""
    return _NOW.get("label")  # type: ignore[return-value]


def queued_message() -> str:
    label, since = _NOW.get("label"), _NOW.get("since")
    ago = f", started {time.monotonic() - since:.0f} s ago" if isinstance(since, float) else ""
    ahead = max(0, _LINE["waiting"] - 1)
    return (f"Another measurement is running on this server ({label}{ago}); yours is queued"
            + (f" behind {ahead} other{'s' if ahead != 1 else ''}" if ahead else "")
            + " and starts as soon as it ends. The model is shared by everyone on this server.")


@contextmanager
def turn(label: str, on_wait: Callable[[str], None] | None = None, limit_s: float = WAIT_LIMIT_S):
    """Hold the server's one measuring slot while the block runs; wait in line (telling ``on_wait``) if taken."""
    if not _GATE.acquire(blocking=False):
        with _LINE_LOCK:
            _LINE["waiting"] += 1
        try:
            deadline = time.monotonic() + limit_s
            while not _GATE.acquire(timeout=1.0):
                if on_wait is not None:
                    on_wait(queued_message())  # a Streamlit call: a Stop click lands here too
                if time.monotonic() > deadline:
                    raise Busy(f"Waited {limit_s:.0f} s for the measurement in progress ({_NOW.get('label')}); "
                               "please try again in a minute.")
        finally:
            with _LINE_LOCK:
                _LINE["waiting"] -= 1
    _NOW.update(label=label, since=time.monotonic())
    try:
        yield
    finally:
        _NOW.clear()
        _GATE.release()


# ---------------------------------------------------------------- results kept per tab
@dataclass
class Measured:
    """A measurement as it grows: ``result`` is updated after every point, so an interruption keeps it."""

    label: str
    settings: tuple
    result: object = None
    done: bool = False  # ran to its end (False: stopped by a click, or failed)
    complete: bool = False  # every planned point was measured (False: the time budget ran out)
    failed: bool = False  # refused or failed: the message channel says why
    seconds: float = 0.0
    load: float | None = None  # the machine's 1-minute load average when it ended


def kept(state: MutableMapping, key: str, model: str | None = None) -> Measured | None:
    """The measurement kept under ``key``, if there is one (and it was made on ``model`` when given:
    every measurement's settings start with the model's name)."""
    found = state.get(key)
    if not isinstance(found, Measured) or (model is not None and found.settings[:1] != (model,)):
        return None
    return found


def status(found: Measured, cores: int | None = os.cpu_count()) -> list[str]:
    """What the reader should know before trusting a kept result: stopped, cut short, a busy machine."""
    if found.failed:
        return []
    out = []
    if not found.done:
        out.append("Stopped before the end: what was measured is shown; run again for the rest.")
    elif not found.complete:
        out.append(f"The {TIME_BUDGET_S:.0f} s time budget ran out (the machine is busy): only part was measured.")
    if found.load is not None and cores and found.load > cores:
        out.append(f"The machine was busy during this measurement (load average {found.load:.1f} on {cores} cores): "
                   "other programs took CPU time, so these times are inflated and noisy. Measure again when it "
                   "is quieter for clean numbers.")
    return out


def measure(state: MutableMapping, key: str, label: str, settings: tuple,
            work: Callable[[Measured, Callable[[], bool]], bool], on_wait: Callable[[str], None] | None = None,
            budget_s: float = TIME_BUDGET_S, wait_s: float = WAIT_LIMIT_S) -> Measured:
    """Run ``work(kept, should_stop)`` in the server's one measuring slot, keeping its result in ``state``.

    ``work`` fills ``kept.result`` as it goes and returns whether every planned point was measured.
    A refused input or a failure becomes a message, never an exception.
    """
    found = Measured(label, settings)
    state[key] = found
    t0 = time.monotonic()
    try:
        with turn(label, on_wait, wait_s):
            t0 = time.monotonic()
            found.complete = bool(work(found, lambda: time.monotonic() - t0 > budget_s))
            found.done = True
    except Busy as exc:
        found.failed = True
        messages.say(str(exc), "warning", state)
    except ValueError as exc:
        found.failed = True
        messages.say(str(exc), "error", state)
    except Exception as exc:  # noqa: BLE001 - out of memory, an odd architecture ...: a message, not a crash
        found.failed = True
        messages.say(f"The measurement failed: {type(exc).__name__}: {exc}", "error", state)
    finally:
        found.seconds, found.load = time.monotonic() - t0, cost.load_average()
        gc.collect()  # model copies made for a measurement go now, not at some later collection
    return found


def _ids(bundle, text: str, limit: int | None = None) -> list[int]:
    ids = list(bundle.tokenizer(text)["input_ids"])
    return ids[:limit] if limit else ids


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def generator(config: SamplingConfig) -> torch.Generator:
    """A generator seeded from the settings, so a run can be repeated draw for draw."""
    return torch.Generator().manual_seed(int(config.seed))


# ---------------------------------------------------------------- on the page (the only Streamlit calls here)
def run_controls(job: keys.JobKeys, label: str) -> bool:
    """The job's Run button and Stop button (any click stops a run; what was measured is kept)."""
    import streamlit as st

    left, right = st.columns([3, 1])
    run = left.button(label, key=job.run, type="primary")
    right.button("Stop", key=job.stop, disabled=not run, help="Ends the measurement; what was measured is kept.")
    return run


def launch(key: str, label: str, settings: tuple, make_work: Callable[[Progress], Callable]) -> None:
    """Measure with a progress bar, in line behind any other measurement on this server."""
    import streamlit as st

    bar = st.progress(0.0, text="Starting…")
    measure(st.session_state, key, label, settings, make_work(lambda f, text: bar.progress(min(1.0, f), text=text)),
            on_wait=lambda text: bar.progress(0.0, text=text))
    bar.empty()
    messages.show()


def show_kept(key: str, model: str) -> Measured | None:
    """The measurement kept for this model, after what to know before trusting it (None if nothing to show)."""
    import streamlit as st

    found = kept(st.session_state, key, model)
    for warning in status(found) if found is not None else []:
        st.warning(warning)
    return found if found is not None and found.result else None


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
        read = batching.step_bytes(spec, p.batch, p.context)
        rows.append({"batch": p.batch, "ms per step": round(p.step_ms, 1), "tokens/s": round(p.tokens_per_s, 1),
                     "tokens/s ÷ batch 1": round(p.tokens_per_s / one.tokens_per_s, 2) if one else None,
                     "MiB read per step": round(read["total"] / 2**20, 1),
                     "KV cache share of the bytes": f"{read['cache'] / read['total']:.1%}",
                     "bandwidth floor (ms)": round(batching.floor_ms(spec, p.batch, p.context, bandwidth), 1)})
    return rows


def batching_sentences(sweep: batching.BatchSweep, spec, bandwidth: float, peak: float) -> list[str]:
    """What the measured curve says (markdown), including where throughput stopped growing and why."""
    one, last = sweep.point(1), (sweep.points[-1] if sweep.points else None)
    if one is None or last is None or last.batch == 1:
        return []
    out = [f"One row: **{one.step_ms:,.0f} ms** per decode step, {one.tokens_per_s:,.0f} tokens/s. "
           f"{last.batch} rows: **{last.step_ms:,.0f} ms** per step, {last.step_ms / one.step_ms:,.1f}× the time "
           f"for {last.batch}× the tokens: **{last.tokens_per_s / one.tokens_per_s:,.1f}× the throughput**. "
           f"Each sequence now waits {last.step_ms:,.0f} ms for every token instead of {one.step_ms:,.0f} ms: the "
           "server buys throughput with a little latency."]
    free = sweep.nearly_free_until()
    out.append(f"Up to **batch {free}** a step took less than {batching.FREE_SLACK:g}× a single-row step: "
               "the extra rows rode along on the same weight read, nearly free.")
    ridge = batching.ridge_batch(spec, sweep.context, bandwidth, peak)
    if ridge < 10_000:
        out.append(f"By the counts, at this machine's measured bandwidth and matmul peak the arithmetic would take "
                   f"as long as the bytes at about **B ≈ {ridge:,.0f}**; beyond that every row costs its full "
                   "share of FLOPs." + (" The measured curve bends earlier: a CPU gets nowhere near its matmul peak "
                                       "on these small products." if free < ridge else ""))
    best = max(sweep.points, key=lambda p: p.tokens_per_s)
    if best.batch < last.batch:
        out.append(f"Throughput peaked at batch {best.batch} ({best.tokens_per_s:,.0f} tokens/s) and fell after "
                   "it: here the step had become compute-bound (or other work on the machine took the cores), so "
                   "more rows only made every sequence wait longer.")
    return out


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


def serving_sentences(runs: dict[str, scheduler.ServeRun]) -> list[str]:
    """The comparison in words, including when continuous batching is not faster and why."""
    static, continuous = runs.get(scheduler.STATIC), runs.get(scheduler.CONTINUOUS)
    if not (static and continuous and static.done and continuous.done):
        return []
    ttft = [_mean([s.first_token_ms for s in run.finished()]) for run in (static, continuous)]
    out = [f"Continuous batching served the queue at **{continuous.tokens_per_s:,.1f} tokens/s** against "
           f"{static.tokens_per_s:,.1f} for static batches, and the first token came after **{ttft[1] / 1000:,.2f} s** "
           f"on average instead of {ttft[0] / 1000:,.2f} s: a queued request starts as soon as any row frees up, "
           f"not when the whole batch ahead of it is done. Static batching spent {static.wasted_rows} row-steps "
           "computing for requests that had already finished."]
    if continuous.tokens_per_s < static.tokens_per_s:
        out.append(f"Here continuous batching was **slower** in tokens/s: it made {continuous.forward_passes} model "
                   f"passes against {static.forward_passes}, one extra prefill pass each time requests joined, and "
                   "on a CPU every pass carries a fixed cost. With few rows and short answers that outweighs the "
                   "padding it saves; its win in waiting time stays.")
    return out


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

                def progress(run: speculative.Speculated, n=n, name=name) -> None:
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


def speculative_sentence(case: SpecCase, run: speculative.Speculated) -> str:
    """Why this draft was faster or slower than plain decoding on this prompt (markdown, from the measurements)."""
    speedup = case.plain.ms / run.ms
    per_round = len(run.tokens) / max(1, len(run.rounds))
    verify, drafting = _mean([r.verify_ms for r in run.rounds]), _mean([r.draft_ms for r in run.rounds])
    plain_step = _mean(case.plain.step_ms)
    rate = f"{run.acceptance_rate:.0%} of {run.drafted} guesses kept" if run.drafted else "no guesses found"
    text = (f"**{run.draft}** on “{case.label}”: {rate}, {len(run.tokens) / max(1, run.forward_passes):.2f} tokens "
            f"per model pass. A round took {drafting:,.1f} ms of drafting and a {verify:,.1f} ms verify pass for "
            f"{per_round:.2f} tokens, against {plain_step:,.1f} ms per token for plain decoding: ")
    if speedup >= 1:
        return text + f"**{speedup:.2f}× faster**."
    if drafting > verify:
        why = "the draft itself cost more than the pass it was meant to save"
    elif not run.drafted or run.acceptance_rate < 0.5:
        why = "too few guesses were kept to pay for the wider verify pass"
    else:
        why = ("the verify pass over k + 1 positions cost nearly as much as k + 1 plain steps: on this machine the "
               "model is not waiting on memory enough for the extra positions to ride along for free")
    if run.draft.startswith(speculative.EARLY_EXIT):
        why += ("; an early exit is also a weak draft, because the first layers alone were never trained to predict "
                "the next token (LayerSkip-style training makes them usable)")
    return text + f"**{speedup:.2f}×, slower**: {why}."


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


SLOWER_BECAUSE = {
    precision.BF16: "this CPU has no fast bfloat16 matrix unit, so the products convert to float32 and back as they "
                    "go: half the bytes, more work per byte",
    precision.INT8: "dynamic quantization also rounds every activation to int8 at every step and small int8 products "
                    "have overheads of their own, so a quarter of the weight bytes need not give a quarter of the time",
    precision.FP8_CACHE: "transformers' fp8 cache turns the whole cache back into float32 at every step",
}


def precision_sentences(rows: list[precision.PrecisionRow]) -> list[str]:
    """Each path's decode step against float32's, and why it is slower where it is (markdown bullets)."""
    by_name = {row.variant: row for row in rows}
    base = by_name.get(precision.FP32)
    out = []
    for name, reason in SLOWER_BECAUSE.items():
        row = by_name.get(name)
        if base is None or row is None:
            continue
        change = row.step_ms / base.step_ms
        if name == precision.FP8_CACHE:
            saved = (f"its cache takes {row.cache_bytes / base.cache_bytes:.0%} of float32's memory, but at "
                     f"{row.cache_positions} positions the cache is only {base.cache_bytes / base.step_bytes:.1%} of "
                     "the bytes a step reads, so it saves memory rather than time")
        else:
            saved = f"it reads {row.step_weight_bytes / base.step_weight_bytes:.0%} of float32's weight bytes per step"
        out.append(f"- **{name}**: {change:.2f}× the time of a float32 step; {saved}"
                   + (f". Slower, because {reason}." if change > 1 else "."))
    int8 = by_name.get(precision.INT8)
    if int8 is not None and int8.quality.top1 < COLLAPSE_TOP1:
        out.append(f"- **int8** moved far from float32 (top-1 agreement {int8.quality.top1:.0%}). torch's dynamic "
                   "int8 rounds the activations too, with one scale per activation tensor at every step, and the "
                   "inputs of each MLP's down projection carry a few huge outlier values, a known trait of LLMs: "
                   "one scale stretched over them leaves the ordinary values only a handful of levels. The weights "
                   "alone lose almost nothing at 8 bits (the dial below); production int8 keeps the outlier "
                   "channels in 16 bits (LLM.int8) or moves the scale into the weights (SmoothQuant).")
    return out


def dial_sentence(curves: dict[str, list[tuple[int, precision.Quality]]]) -> str:
    """Where each grouping's top-1 agreement first fell below ``COLLAPSE_TOP1``, and what 4 bits in blocks does."""
    parts = []
    for label, points in curves.items():
        fallen = [bits for bits, q in points if q.top1 < COLLAPSE_TOP1]
        parts.append(f"**{label}**: " + (f"top-1 agreement falls below {COLLAPSE_TOP1:.0%} at **{max(fallen)} bits**"
                                          if fallen else f"top-1 agreement stays above {COLLAPSE_TOP1:.0%} down to "
                                                         f"{min(bits for bits, _ in points)} bits"))
    blocks = dict(curves.get(next(iter(GROUPINGS)), []))
    if 4 in blocks and blocks[4].kl_bits < 1e-6:
        parts.append("At **4 bits in blocks of 32** the rounding gives back the very same weights (KL "
                     f"{blocks[4].kl_bits:.1g}): the GGUF file stored them exactly that way, so nothing is left "
                     "to lose")
        if 8 in blocks and blocks[8].kl_bits < 1e-6:
            parts.append("8 bits is exact too, since each block's 16 levels are among its 256 (255 = 15 × 17), while "
                         "5 and 6 bits place their levels in between and round the stored values off them: more "
                         "bits is not always closer")
    return " · ".join(parts) + "."
