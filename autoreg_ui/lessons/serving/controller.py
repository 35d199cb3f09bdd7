"""The serving page's controller: the tables of each experiment's results and the live panel's pace. What each
experiment measures is ``autoreg_core.experiments.serving_measurements``; what the page says about it is
``text``. Nothing here draws.
"""
from __future__ import annotations

from autoreg_core.engine.tokens import sequence_text, token_views
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import precision
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments import speculative_decoding as speculative
from autoreg_core.experiments.serving_measurements import SpecCase
from autoreg_ui.lessons.serving import keys

LIVE_EVERY_S = 5.0  # the live panel's refresh: it redraws itself only (a snapshot of the batcher's passes)
OWN_REQUESTS = 6  # requests a tab alone may send through the batcher at once (under its 12 rows a pass)
OWN_STEPS = 8  # decode steps each: about a second on SmolLM2 on two CPU cores
OWN_PROMPT_TOKENS = 32  # the end of the page's text the requests continue (one short prefill, copied per request)




def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")




# ---------------------------------------------------------------- this server, right now
def live_every(auto: bool) -> float | None:
    """How often the live panel redraws itself: every ``LIVE_EVERY_S`` seconds, or never (paused)."""
    return LIVE_EVERY_S if auto else None


def offers_own_requests(now, batching: bool, has_text: bool) -> bool:
    """A tab alone on the server (no other tab or request stepped in the panel's window) is offered requests of its
    own, so the panel has passes to count; not when the server does not batch (each would be a pass of its own)."""
    return batching and has_text and now.others == 0


def own_prompt(ids: list[int]) -> list[int]:
    """The end of the page's text that the requests continue."""
    return list(ids)[-OWN_PROMPT_TOKENS:]


def kept_own(state, model: str):
    """The requests sent from this tab on ``model`` (what the batcher did with them), if any."""
    found = state.get(keys.SRV_OWN_KEPT)
    return found[1] if isinstance(found, tuple) and found[0] == model else None


# ---------------------------------------------------------------- 1 · batching




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








def speculative_rows(cases: list[SpecCase]) -> list[dict]:
    """One row per prompt and decoding: tokens, passes, acceptance, time and speedup against plain."""
    rows = []
    for case in cases:
        if case.plain is None:
            continue
        rows.append({"prompt": case.label, "decoding": "plain", "tokens": len(case.plain.tokens),
                     "model passes": case.plain.forward_passes, "draft acceptance rate": None, "passes saved": 0,
                     "time (s)": round(case.plain.ms / 1000, 2), "speedup": 1.0, "same tokens as plain": True})
        for run in case.runs or []:
            rows.append({"prompt": case.label, "decoding": f"{run.draft}, k = {run.k}", "tokens": len(run.tokens),
                         "model passes": run.forward_passes,
                         "draft acceptance rate": f"{run.acceptance_rate:.0%}" if run.drafted else "no guesses",
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






def precision_rows(rows: list[precision.PrecisionRow], bandwidth: float, tokenizer) -> list[dict]:
    """The precision table: memory measured from the tensors, the decode step against its floor, quality. The
    weight-only int8 row has no bytes-read or floor figure: its step also writes and reads a float32 copy of every
    weight, which the stored bytes leave out (``text.Q8_NO_FLOOR`` says so under the table)."""
    out = []
    for row in rows:
        copies = row.variant == precision.INT8_WEIGHTS
        floor = None if copies else row.step_bytes / bandwidth * 1000.0
        out.append({"stored as": row.variant, "weights (MiB)": round(row.weight_bytes / 2**20, 1),
                    "read per step (MiB)": None if copies else round(row.step_weight_bytes / 2**20, 1),
                    f"KV cache at {row.cache_positions} positions (KiB)": round(row.cache_bytes / 1024, 1),
                    "fastest decode step (ms)": round(row.step_ms, 1),
                    "bandwidth floor (ms)": None if floor is None else round(floor, 1),
                    "measured ÷ floor": None if floor is None else round(row.step_ms / floor, 1),
                    "KL from float32 (bits)": float(f"{row.quality.kl_bits:.3g}"),
                    "top-1 agreement": f"{row.quality.top1:.0%}", "perplexity": round(row.quality.perplexity, 2),
                    "greedy continuation": sequence_text(tokenizer, row.tokens)})
    return out





def tied_head(bundle) -> bool:
    """Whether the model's LM head is its token embedding matrix (one tensor, not two)."""
    head, embedding = bundle.model.get_output_embeddings(), bundle.model.get_input_embeddings()
    return head is not None and embedding is not None and head.weight is embedding.weight
