"""What the serving page says: the lesson's prose, section by section, and its captions.

Constants and functions of the measured results (no Streamlit, no controller): the controller
(``serving.py``) measures, these say what the numbers mean.
"""
from __future__ import annotations

from autoreg_core.experiments import precision
from autoreg_core.experiments import roofline as batching

GROUPINGS = {f"blocks of {precision.GGUF_BLOCK} (as in GGUF files)": precision.GGUF_BLOCK, "one output row": None}
COLLAPSE_TOP1 = 0.9  # quality has collapsed once fewer than this share of top-1 tokens agree with float32


INTRO = (
    "A decode step reads every weight of the model to produce one token for one sequence, so on most hardware the "
    "processor mostly waits for memory (the Naive vs KV cache page measures it on this machine). Servers win that "
    "time back in four ways, each measured below on the loaded model on this machine: **batching** (one weight "
    "read, many sequences), **continuous batching** (requests join and leave the running batch at every step), "
    "**speculative decoding** (a cheap draft guesses, the model checks several guesses in one pass, every token "
    "still drawn from the model's own distribution) and **lower precision** (fewer bytes per weight).")
MEASURED_LIVE = (" Nothing below is precomputed: every number is measured when you press a button. "
                 "Measurements take turns, one at a time per server, because every student here shares the model.")


def measuring_now(label: str) -> str:
    return f"Measuring now on this server: {label}. A click of yours waits in line behind it."


BATCHING = (
    "Decode B sequences together and a step still reads every weight once; what grows with B is each row's own KV "
    "cache on top, and the arithmetic. While the weight bytes dominate, a step of B rows takes far less than B "
    "single-row steps, so up to B times as many tokens come out per second. Each sequence still waits one whole "
    "step per token, so whatever the step slows is latency every sequence pays: the measurement below gives both "
    "factors.")
BATCHED_ROUNDING = ("batched logits differ from solo ones by rounding (about 1e-4 at most in the runs measured on the "
                    "embedded model, on a CPU in float32: `python -m bench.batch_exactness`), enough to swap two "
                    "tokens whose logits are that close")
CONTINUOUS_BATCHING = (
    "Real requests differ in length. **Static batching** fills the slots and decodes until the longest member is "
    "done: finished rows keep their slot (and keep being computed) while the queue waits. **Continuous batching** "
    "looks at the batch after every step: finished rows leave, queued requests are prefilled and join the running "
    "batch on the same KV cache (rows of different lengths are left-padded and masked: this app's way to batch; "
    "vLLM-style servers run ragged batches over a paged cache instead). Both serve the same queue greedily here, "
    f"and every request gets the tokens it would get alone unless a near-tie tips: {BATCHED_ROUNDING}.")
SPECULATIVE = (
    "A **draft** guesses the next k tokens; the model reads the last token and all k guesses in **one verify pass** "
    "and so knows its own distribution p at each. Guess d (drafted with probability q) is kept with probability "
    "min(1, p(d)/q(d)); at the first rejection a token is drawn from max(0, p − q), renormalised, and the round "
    "ends; if all are kept the last position adds one more token. Every token then follows p exactly, so the output "
    "is the model's own; greedy output is that of plain decoding, unless rounding tips a near-tie: the verify pass "
    "computes k + 1 positions at once, and its logits differ from one-at-a-time steps by rounding. No second model "
    "is embedded, so the drafts here are **prompt lookup** (find the last two tokens earlier in the context, or "
    "failing that the last one, take the earliest match and copy what followed it) and an **early exit** (the "
    "first layers of this same model, then its final norm and LM head).")
OTHER_DRAFTS = "Other models of the operator's allowlist can draft if they share the tokenizer."
SAMPLED_TEXTS_DIFFER = ("Sampling: speculative and plain runs draw different random numbers, so their texts differ; "
                        "what is equal is the distribution every token is drawn from (tested with many draws).")


def rounds_title(prompt: str, draft: str) -> str:
    return f"Every round: “{prompt}” with {draft}"


PRECISION = (
    "Since a decode step waits for bytes, storing each weight in fewer of them lowers the floor on its time "
    "(bytes read ÷ bandwidth) and the memory a model needs, at the price of rounding every weight. Four real paths, "
    "built from the loaded model and compared with float32 over a fixed text: **bfloat16** (a torch copy); **int8** "
    "(torch's dynamically quantized Linear layers: int8 weights with **one scale per output row**, and at every "
    "step each layer's input rounded to unsigned 8-bit values with **one scale for the whole tensor**, then 8-bit "
    "integer products; torch asks for a reduced range there, so on x86 only 128 of the 256 levels are used); **int8 "
    "weights only** (every weight stored as GGUF's Q8_0 stores it, int8 values in blocks of 32 with a 16-bit scale "
    "each, 8.5 bits per weight; here the activations and products stay float32, a reference for what rounding the "
    "weights alone costs); and float32 weights with an **fp8 KV cache** (transformers' "
    "`QuantizedCache` with its fp8 backend: one byte per value and one scale per tensor, fixed at the first "
    "update, so new positions are appended as they come. Its 4-bit backends, quanto and HQQ, differ: they keep "
    "the most recent tokens, 128 by default, in full precision and quantize them in chunks, a residual window "
    "that a bytes-per-value figure leaves out; the cache bytes shown here are measured from whatever is stored). "
    "Real kernels differ from the float32 reference: llama.cpp's kernels for Q8_0 and Q4_1, on the CPU and in its "
    "CUDA back end's quantized matrix kernels (MMVQ, MMQ), round each activation vector to 8 bits too, in blocks of "
    "32 with a scale of their own, and multiply in integers (the embedded Q4_1 file runs that way there); other GPU "
    "weight-only kernels, such as Marlin for GPTQ and AWQ files, multiply the unpacked weights by 16-bit "
    "activations. What decides the damage is the **scale granularity**: one scale per 32 values usually costs little "
    "(the Q8_0 row measures it here), and "
    "torch's dynamic int8 below keeps one scale per output row for the weights but stretches one scale over each "
    "whole activation tensor; the table measures what that does here.")
EMBEDDED_WEIGHTS = (
    "The embedded weights were already 4-bit in the GGUF file they ship in (Q4_1: blocks of 32 weights sharing a "
    "16-bit scale and a 16-bit minimum, so 4 + 32/32 = **5 bits per weight** once the scales are counted; the "
    "embedding in 8 bits). The float32 model is those values written out in 4 bytes each.")


def precision_caption(cache_positions: int, quality_positions: int) -> str:
    return (f"Step time: the fastest of the decode steps that filled the cache to {cache_positions} positions. "
            "Bandwidth floor: bytes read by a decode step ÷ this machine's measured copy bandwidth. KL and top-1 "
            f"over {quality_positions} positions of a fixed text. {Q8_NO_FLOOR}")


Q8_NO_FLOOR = (f"{precision.INT8_WEIGHTS} has no bytes-read or floor figure: its stored weights are in the weights "
               "column, but this build also unpacks every Linear weight into float32 at each step (writing and "
               "reading at least one full float32 copy of it).")


def dial_label(bits: tuple[int, ...]) -> str:
    return f"Round the layers' weights to {bits[0]}…{bits[-1]} bits"


DIAL_KEEPS = ("The dial rounds the decoder layers' Linear weights only: the token embedding and the LM head (one "
              "tied matrix in SmolLM2) stay float32.")


def dial_keeps(model: str, tied: bool, dtype: str = "float32") -> str:
    """What the dial leaves as loaded (``dtype``), for the loaded model: one tied matrix, or an embedding and a
    separate head."""
    both = f"one tied matrix in {model}" if tied else f"two separate matrices in {model}"
    return (f"The dial rounds the decoder layers' Linear weights only: the token embedding and the LM head ({both}) "
            f"stay {dtype}.")


CHEAP_ROW = 0.25  # an extra row "cost little" while it adds less than this share of a single-row step


def step_growth_reading(step_ratio: float, batch: int) -> str:
    """A batched step's time against a single row's, in words, from what each extra row cost: (ratio − 1) ÷ (B − 1)
    of a single-row step (at B = 2 a ratio of 1.9 is a second row costing 0.9 of a row; at B = 16, 0.06)."""
    head = f"the step took ×{step_ratio:,.2f} the time for {batch}× the rows"
    if batch <= 1:
        return head
    extra = (step_ratio - 1.0) / (batch - 1)
    if extra <= 0:
        return f"{head}: no slower, the extra rows took no time that this measurement could see"
    each = f"each extra row cost {extra:,.2f} of a single-row step"
    if extra < CHEAP_ROW:
        return f"{head}: {each}, little"
    if extra < 1:
        return f"{head}: {each}, less than alone but far from nothing"
    return f"{head}: {each}, no gain: the rows cost as much together as alone, or more"


def batching_sentences(sweep: batching.BatchSweep, spec, bandwidth: float, peak: float) -> list[str]:
    """What the measured curve says (markdown), including where throughput stopped growing and why."""
    one, last = sweep.point(1), (sweep.points[-1] if sweep.points else None)
    if one is None or last is None or last.batch == 1:
        return []
    slow, gain = last.step_ms / one.step_ms, last.tokens_per_s / one.tokens_per_s
    out = [f"One row: **{one.step_ms:,.0f} ms** per decode step, {one.tokens_per_s:,.0f} tokens/s. "
           f"{last.batch} rows: **{last.step_ms:,.0f} ms** per step; {step_growth_reading(slow, last.batch)}: "
           f"**{gain:,.1f}× the throughput**. Each sequence now waits {last.step_ms:,.0f} ms for every token instead "
           f"of {one.step_ms:,.0f} ms: the server buys {gain:,.1f}× the throughput with {slow:,.1f}× the latency per "
           "token."]
    free = sweep.nearly_free_until()
    second = min((p for p in sweep.points if p.batch > 1), key=lambda p: p.batch)
    if free is None or free <= 1:
        ratio = second.step_ms / one.step_ms
        out.append(f"Already at batch {second.batch} {step_growth_reading(ratio, second.batch)}; that is not under "
                   f"{batching.FREE_SLACK:g}× a single-row step (likely other work on the cores, or products too small "
                   "to run faster batched; not measured here).")
    else:
        at = sweep.point(free)
        out.append(f"The largest batch whose step took less than {batching.FREE_SLACK:g}× a single-row step was "
                   f"**batch {free}**: {step_growth_reading(at.step_ms / one.step_ms, free)}.")
    ridge = batching.ridge_batch(spec, sweep.context, bandwidth, peak)
    if ridge < 10_000:
        out.append(f"By the counts, at this machine's measured bandwidth and matmul peak the arithmetic would take "
                   f"as long as the bytes at about **B ≈ {ridge:,.0f}**; beyond that every row costs its full "
                   "share of FLOPs." + (" The measured curve bends earlier, likely because products this small run "
                                       "far below the measured matmul peak (not measured here)."
                                       if (free or 1) < ridge else ""))
    best = max(sweep.points, key=lambda p: p.tokens_per_s)
    if best.batch < last.batch:
        out.append(f"Throughput peaked at batch {best.batch} ({best.tokens_per_s:,.0f} tokens/s) and fell to "
                   f"{last.tokens_per_s:,.0f} at batch {last.batch}. Being compute-bound would only flatten it; a fall "
                   "means each extra row cost more than its share: its own cache reads, larger intermediate tensors "
                   "that no longer fit the processor's caches, or other work on the machine taking the cores.")
    return out


TTFT_PARTS = "waiting for a row, then its prefill, then the first choice"  # what the serving page's TTFT holds


SLOWER_BECAUSE = {
    precision.BF16: ("likely the products: without a bfloat16 matrix unit (AMX, AVX-512 BF16) a CPU converts to "
                     "float32 and back as it goes, half the bytes but more work per byte (this is inferred, not "
                     "measured here)"),
    precision.INT8: ("dynamic quantization also rounds every activation to int8 at every step and small int8 "
                     "products have overheads of their own, so fewer weight bytes need not give proportionally less "
                     "time"),
    precision.INT8_WEIGHTS: ("likely that copy: this build has no fused int8 kernel, and writing 4 bytes per weight "
                             "and reading them back at every step moves more bytes than a float32 step reads "
                             "(inferred, not measured here; llama.cpp's CPU kernel builds no copy: it rounds the "
                             "activations to 8 bits in blocks of 32 and multiplies the int8 values in integers)"),
    precision.FP8_CACHE: "transformers' fp8 cache turns the whole cache back into float32 at every step",
}


KEPT_TOP1 = 0.99  # weight-only rounding "lost almost nothing" while top-1 agreement stays at or above this


def weights_only_reading(quality: precision.Quality) -> str:
    """What rounding the weights alone (blocks of 32, a scale each) cost, worded from its measured agreement."""
    numbers = f"top-1 agreement {quality.top1:.0%}, KL {quality.kl_bits:.2g} bits"
    if quality.top1 >= KEPT_TOP1:
        return f"The weights alone, one scale per 32 values, lose almost nothing at 8 bits ({numbers})"
    if quality.top1 >= COLLAPSE_TOP1:
        return f"The weights alone, one scale per 32 values, lose a little at 8 bits ({numbers})"
    return f"Even the weights alone, one scale per 32 values, moved far at 8 bits here ({numbers})"


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
        elif name == precision.INT8_WEIGHTS:
            saved = (f"it stores {row.weight_bytes / base.weight_bytes:.0%} of float32's weight bytes; this build also "
                     "unpacks every Linear weight into float32 at each step (writing and reading at least one full "
                     "float32 copy of it)")
        else:
            saved = f"it reads {row.step_weight_bytes / base.step_weight_bytes:.0%} of float32's weight bytes per step"
        out.append(f"- **{name}**: {change:.2f}× the time of a float32 step; {saved}"
                   + (f". Slower, because {reason}." if change > 1 else "."))
    int8 = by_name.get(precision.INT8)
    if int8 is not None and int8.quality.top1 < COLLAPSE_TOP1:
        out.append(f"- **int8** moved far from float32 (top-1 agreement {int8.quality.top1:.0%}). torch's dynamic "
                   "int8 rounds the activations too, with one scale per activation tensor at every step, and the "
                   "inputs of each MLP's down projection carry a few huge outlier values, a known trait of LLMs: "
                   "one scale stretched over them leaves the ordinary values only a handful of levels. "
                   + (weights_only_reading(q8.quality) if (q8 := by_name.get(precision.INT8_WEIGHTS)) is not None
                      else "The weights alone, rounded in blocks of 32 with a scale each, are measured by the dial "
                           "below")
                   + "; production int8 keeps the outlier channels in 16 bits (LLM.int8) or moves the scale into the "
                   "weights (SmoothQuant).")
    return out


def dial_sentence(curves: dict[str, list[tuple[int, precision.Quality]]], keeps: str = DIAL_KEEPS) -> str:
    """Where each grouping's top-1 agreement first fell below ``COLLAPSE_TOP1``, and what 4 bits in blocks does
    (``keeps``: what the dial left alone, ``dial_keeps`` for the loaded model)."""
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
    return " · ".join(parts) + ". " + keeps


# ---------------------------------------------------------------- this server, right now
LIVE_TITLE = "This server, right now"
LIVE_INTRO = ("Every tab on this server that presses Next token asks this model for one decode step. Steps asked for "
              "at the same moment run as **one** forward pass, each tab's row with its own KV cache: batching, one "
              "step at a time, happening to your class. It is not the continuous batching of section 2: no running "
              "batch is kept, each pass gathers whichever steps are waiting. Counted over the last minute, live.")


def live_auto_label(every_s: float) -> str:
    return f"Update every {every_s:g} s"


LIVE_AUTO_HELP = ("Off: the panel stays still (handy on a projector) and shows the figures of the moment you turned "
                  "it off, or of your last click on this page.")
LIVE_PAUSED = "Paused: these figures stay as they were. Turn the switch back on to follow the server again."
LIVE_OFF = ("Cross-tab batching is off on this server (the operator set AUTOREG_BATCH=0): every step is a pass of "
            "its own.")


def live_metrics(now, last_rows: int | None) -> list[tuple[str, str]]:
    """The panel's figures: passes, tokens per second, the share that rode together, and this tab's last step."""
    rode = ("—" if last_rows is None else "alone" if last_rows <= 1
            else f"{last_rows - 1} other tab{'s' if last_rows > 2 else ''}")
    return [("Decode passes, last minute", f"{now.passes:,}"), ("Tokens per second served", f"{now.tokens_per_s:.1f}"),
            ("Tokens that shared a pass", f"{now.shared_share:.0%}"), ("Your last step rode with", rode)]


def live_sentence(now) -> str:
    if not now.passes:
        return "No decode step in the last minute: press Next token here or on another tab."
    biggest = max(now.by_rows)
    rows = "tabs' steps" if biggest > 1 else "tab's step"
    return (f"{now.passes:,} passes served {now.tokens:,} tokens; the largest pass carried {biggest} "
            f"{rows} at once.")


def live_totals(now) -> str:
    """Everything this server's batcher did since it started: a count that only grows."""
    t = now.since_start
    return (f"Since this server started: {t.passes:,} pass{'es' if t.passes != 1 else ''} served "
            f"{t.tokens:,} token{'s' if t.tokens != 1 else ''}, {t.shared_tokens:,} of them in a pass shared "
            f"with another tab's step.")


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
SERVING_BATCH = ("One decode step for 8 sequences instead of 1, each at 256 tokens: how many times more bytes "
                 "does it read?",
                 ("about the same (under 2×)", "about 4×", "about 8×"),
                 "**{ratio:.2f}×**: the {weights} of weights are read once per step whatever the batch; only the "
                 "caches grow ({cache_1} for one sequence, {cache_8} for eight). That is why, while a step is "
                 "memory-bound, one step for 8 sequences costs far less than 8 steps; the Batching section measures "
                 "how much less on this machine.")
SERVING_MEMORY = ("32 users at 2,048 tokens each on this model: what takes more memory, the weights or the KV caches?",
                  ("the weights", "the KV caches"),
                  "Weights **{weights}**, caches **{caches}** (32 × 2,048 positions × {per_token} each). {reading}")
CACHES_LARGER = ("Here the caches are {times:.1f}× the weights: with many users they, not the weights, fill the "
                 "memory, which is why servers page and share them.")
WEIGHTS_LARGER = ("Here the weights are still {times:.1f}× the caches; longer texts or more users would turn that "
                  "around, since only the caches grow with them.")
SERVING_CROSSOVER = ("Sequences of 256 tokens each: from how many sequences in one decode step do their KV caches "
                     "add up to more bytes than this model's weights?",
                     ("10 or fewer", "11 to 100", "101 to 1,000", "more than 1,000"),
                     "From **{batch:,}** sequences: the weights are {weights}, read once per step whatever the batch, "
                     "and each sequence's cache at 256 tokens adds {per_sequence}. Below that the weights dominate "
                     "what a step reads; past it the caches do.")


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "1 · Batching: one weight read, many sequences": (
        "One step for many sequences reads the weights once. Watch two numbers as the batch grows: the time of "
        "one step, and the tokens per second it delivers.",
        "Run the sweep and find the batch at which the step time starts to climb.",
        "Why is a server with many users cheaper per token than a laptop with one?"),
    "2 · Static vs continuous batching": (
        "Static batching waits for the longest request; continuous batching refills a finished slot at once.",
        "Compare the total time and the idle slots of both schedules.",
        "Which users gain most from continuous batching: the short requests or the long ones?"),
    "3 · Speculative decoding": (
        "A cheap draft proposes several tokens and the model checks them all in one pass; every token is still "
        "drawn from the model's own distribution (greedy: the same tokens unless rounding tips a near-tie), and "
        "the speed depends on how many drafted tokens are kept.",
        "Change the draft and compare its draft acceptance rate (kept ÷ drafted) with its speed-up: do the two move "
        "together?",
        "Why can a bad draft make generation slower rather than wrong?"),
    "4 · Precision: fewer bytes per weight": (
        "Fewer bits per weight shrink memory and the bytes each step reads; the quality numbers show what "
        "rounding costs, measured against full precision.",
        "Run the bit dial and find the width where the top-1 agreement collapses.",
        "Weight-only int8 and dynamic int8 both store about 8 bits per weight (8.5 with Q8_0's block scales). "
        "Which one changes the answers more, "
        "and what does it round that the other does not?"),
    LIVE_TITLE: (
        "The panel counts this server's forward passes over the last minute by how many rows (tabs' steps) each "
        "one carried.",
        "Open several tabs, or ask the class, and press Next token at the same moment; then refresh and look at "
        "the rows.",
        "If a pass with 8 rows takes little more time than a pass with one, why would that be, and when would "
        "it stop being true?"),
}
