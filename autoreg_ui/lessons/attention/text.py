"""What the attention page says: the lesson's prose and its sentences with this model's and this session's numbers.

Pure functions and constants (no Streamlit): the page decides where each text goes.
"""
from __future__ import annotations

import math
from dataclasses import replace

from autoreg_core.engine.kv_cache import PhaseTimes, WorkedExample
from autoreg_core.engine.model_spec import Q4_1_BYTES, ModelSpec
from autoreg_ui.format import apart, human_bytes

CAPTION = ("Every decode step feeds one token in. Its own key and value are appended to the KV cache first, "
           "as one new row; then its query looks at every key in the cache, its own included, and mixes "
           "their values by those weights.")
NO_SESSION = "Start a session on the *Step through generation* page (type a prompt there)."
NOTHING_YET = "Nothing has been through the model yet."


def no_capture(family: str) -> str:
    return (f"This page cannot recompute attention for {family}'s layers, so it shows no attention rows. "
            "The cache sections below still work.")


# ---------------------------------------------------------------- 1 · where the new token looked
DECODE_STEP_INTRO = ("With the cache, a decode step computes one query $q_t$ (per head) for its new position t, "
                     "adds that position's key and value to the cache, and reads the keys and values of all "
                     "$t + 1$ positions $0 … t$, its own included:")
SOFTMAX_LATEX = r"a_t=\operatorname{softmax}\!\Big(\frac{q_t K_{\le t}^{\top}}{\sqrt{d}}\Big)"
MIX_LATEX = r"o_t = a_t\,V_{\le t}"
def not_recomputable(family: str) -> str:
    """Why no row is shown when the page cannot recompute attention for the loaded model's layers at all."""
    return (f"No attention row for this model: the page's recomputation of the attention weights does not handle "
            f"the layout of {family}'s attention layers, so no step on any page can record one.")


NOT_CAPTURED = ("This row was not captured: the step was taken on a page that does not record attention. "
                "Steps taken here are recorded.")


def weights_text(head_dim: int, n_rows: int) -> str:
    """A layer that sees every position (a sliding layer's sentence is ``sliding_text.sliding_weights_text``)."""
    return (f"Here $d={head_dim}$ and $K$, $V$ are ${n_rows}\\times{head_dim}$ per head, so $a_t$ has exactly "
            f"**{n_rows}** weights that add up to 1, one per cached token. They never look ahead: the future is "
            "not in the cache yet.")


STRIP_LEGEND = ("Each token is shaded by the weight the new token's query gave it, pale for little and deeper "
                "blue-green for more, and has a bar under it that grows with that weight (the full bar marks the "
                "row's largest). The query is outlined in blue, prompt tokens have a dashed border; hover a token "
                "for its exact weight. A screen reader reads each token with its weight.")


def bar_title(where: str, position: int) -> str:
    """A title line and, after it, a sentence the chart shows as its caption (``charts.framed``)."""
    return (f"{where}<br>The weights that the query at position {position} gave the keys at positions 0 to "
            f"{position}, its own included.")


def heads_title(layer: int, n_heads: int, position: int) -> str:
    return f"Layer {layer}: all {n_heads} heads for query {position} (colour = shared K/V head)"


def query_text(position: int, token_code: str, n_steps: int, where: str) -> str:
    what = f"the token of decode step {n_steps}" if n_steps else "the last prompt token, before any step"
    return f"Query: position **{position}** {token_code}, {what}. {where}."


# ---------------------------------------------------------------- 2 · the triangle
def triangle_text(prompt_len: int, n_rows: int, n_steps: int) -> str:
    return (f"Row $q$ is where the token at position $q$ looked; columns are the cached keys. The **{prompt_len} "
            "prefill rows** (grey strip) came from one pass over the prompt; each **decode step** (blue strip) "
            "added one row, one key longer. Above the diagonal is the future: masked, weight 0. Now: "
            f"{n_rows} rows, {n_steps} decode steps.")


def triangle_title(where: str, n_shown: int) -> str:
    return f"{where}: {n_shown} queries × {n_shown} keys"


def missing_rows(n_missing: int, n_rows: int) -> str:
    return (f"{n_missing} of {n_rows} rows were not captured (steps taken with attention capture off). "
            "They are left grey, not guessed.")


def last_rows_caption(n_rows: int, shown: int, first: int) -> str:
    return (f"The sequence has {n_rows} positions; the chart shows the last {shown} queries and keys "
            f"(positions {first}–{n_rows - 1}) so the page stays light.")


# ---------------------------------------------------------------- 3 · grouped-query attention
def example_group(n_heads: int) -> int:
    """A grouping a model without GQA could use: the largest of 4, 3, 2 query heads per K/V head that divides its
    heads (Llama-3-8B's 32 query heads share 8 K/V heads, 4 each); 1 if none does."""
    return next((g for g in (4, 3, 2) if n_heads % g == 0), 1)


def gqa_text(model: str, spec: ModelSpec, group: int, positions: int) -> str:
    with_gqa, without_gqa = spec.cache_bytes(positions), spec.without_gqa().cache_bytes(positions)
    if group == 1:
        return no_gqa_text(model, spec, positions)
    return (f"{model} has **{spec.n_heads} query heads** but caches only **{spec.n_kv_heads} K/V heads**: each "
            f"group of {group} query heads reads the same cached keys and values. Queries are never cached, so only "
            f"K and V count. At {positions} positions the cache holds {human_bytes(with_gqa)}; with one K/V per "
            f"query head it would be {human_bytes(without_gqa)}, **{without_gqa / with_gqa:g}× more**.")


def no_gqa_text(model: str, spec: ModelSpec, positions: int) -> str:
    """A model whose every query head keeps its own K and V: what grouping would save, computed from its shape."""
    cached = spec.cache_bytes(positions)
    g = example_group(spec.n_heads)
    if g == 1:
        grouped = ""
    else:
        kv = spec.n_heads // g
        smaller = replace(spec, n_kv_heads=kv).cache_bytes(positions)
        grouped = (f" Had its {spec.n_heads} query heads shared {kv} K/V head{'s' if kv > 1 else ''}, {g} each "
                   f"(grouped-query attention, as Llama-3-8B's 32 query heads share 8), the cache would hold "
                   f"{human_bytes(smaller)}: **{g}× smaller**.")
    return (f"{model} has **{spec.n_heads} query heads** and caches **one K/V head for each** of them: no "
            f"grouped-query attention, every query head reads keys and values of its own. Queries are never cached, so "
            f"only K and V count. At {positions} positions the cache holds {human_bytes(cached)}.{grouped}")


def kv_group_caption(kv_head: int, query_heads: list[int]) -> str:
    return f"K/V head {kv_head} ← query heads {', '.join(map(str, query_heads))}"


# ---------------------------------------------------------------- 4 · the KV cache
def cache_check(measured: int, formula: int, per_position: float) -> tuple[bool, str]:
    """(equal, what to say): the measured cache against the formula."""
    if measured == formula:
        return True, f"Equal, byte for byte: {formula:,} B. Each new token adds {per_position:,.0f} B."
    return False, f"Measured {measured:,} B differs from the formula {formula:,} B."


def sliding_cache_text(formula: int, n_sliding: int, n_layers: int, kept: int, window: int, family: str,
                       adds: float) -> str:
    """The cache of a sliding-window model once a window is full, measured equal to the formula (which counts the
    positions each layer keeps): which layers stopped growing, and what a new token adds now (``adds``: bytes per
    position of the layers that still keep every position)."""
    many = n_sliding > 1
    attend, keep, they = ("attend", "keep", "they have") if many else ("attends", "keeps", "it has")
    growth = (f"each new token now adds {adds:,.0f} B, in the other layers" if adds else
              "each new token's keys and values now replace the oldest ones kept, and the cache stays this size")
    return (f"Equal, byte for byte: {formula:,} B. {n_sliding} of the {n_layers} layers of this {family} model "
            f"{attend} over a sliding window of {window} positions and {keep} only the last {kept} positions' keys "
            f"and values (the next token's own key completes the window): {they} stopped growing, so {growth}.")


def layer_shapes_text(shape) -> str:
    return (f"Per layer: K `{list(shape.keys)}` and V `{list(shape.values)}` = "
            f"[batch, kv_heads, positions, head_dim], {shape.dtype}.")


def worked_example_text(ex: WorkedExample, model: str, dtype: str) -> str:
    return (f"**The worked example, with this model's numbers.** A {ex.prompt_tokens}-token prompt, then "
            f"{ex.new_tokens} new tokens, on {model} ({dtype} cache): the prefill writes {ex.prompt_tokens} "
            f"positions at once, {human_bytes(ex.after_prefill)}; each new token adds {human_bytes(ex.per_token)}; "
            f"once the {ex.new_tokens}th is fed in, the cache holds {ex.positions} positions: "
            f"**{human_bytes(ex.at_end)}** ({ex.at_end:,} bytes). That is {ex.positions} and not "
            f"{ex.positions - 1} because this app feeds every chosen token in at once, so the next distribution is "
            f"ready; a generator that stops after the {ex.new_tokens}th token never feeds it, and its cache ends at "
            f"{ex.positions - 1} (the count on the Inside page).")


# ---------------------------------------------------------------- 5 · memory calculator
def calculator_caption(calc) -> str:
    return (f"{calc.name}: {calc.n_layers} layers, {calc.n_heads} query heads, {calc.n_kv_heads} K/V heads of "
            f"{calc.head_dim}, {calc.n_params / 1e6:,.0f} M parameters. {calc.note}.")


def memory_title(spec: ModelSpec) -> str:
    """The memory chart's one-line title, true for the model drawn: a sliding layer keeps at most its window − 1
    positions (``ModelSpec.positions_kept``), so its share of the cache stops growing there."""
    windows = sorted({w for w in spec.layer_windows if w is not None})
    if not windows:
        return "The cache grows linearly with tokens"
    window = f"the {windows[0]:,}-token window fills" if len(windows) == 1 else "the sliding windows fill"
    if len(spec.sliding_layers) >= spec.n_layers:
        return f"The cache grows with tokens until {window}, then stays flat"
    return f"The cache grows linearly with tokens, more slowly once {window}"


def memory_caption(spec: ModelSpec) -> str:
    """The memory chart's caption (under its title): what the line is computed from."""
    return (f"Computed, not measured: “{spec.name}” at batch {spec.batch}, from its shape and the chosen "
            "precisions, beside the weights' bytes.")


def weights_help(calc) -> str:
    scales = (" (4-bit values plus, per block of 32, a 16-bit scale and a 16-bit minimum: 5 bits each)"
              if calc.weight_bytes_per_param == Q4_1_BYTES else "")
    return f"{calc.n_params:,} parameters × {calc.weight_bytes_per_param:g} B{scales}"


def beyond_context(calc) -> str | None:
    """A warning when the chosen length is longer than the model can read (None when it fits)."""
    if calc.seq_len <= calc.max_positions:
        return None
    return (f"{calc.name} reads at most {calc.max_positions:,} tokens (its context length); {calc.seq_len:,} is "
            "beyond it. The formula still gives bytes, but this model could not use such a cache: it was not trained "
            "on positions past its context, so a server refuses or cuts a longer text, and cutting it loses what "
            "was cut (see *When the cache runs out* on the Inside page).")


def cache_vs_weights(calc, cache_bytes: int, without_gqa: int) -> str:
    return (f"The cache is **{cache_bytes / calc.weight_bytes:.2f}×** the weights. It grows with every token and "
            "every sequence in the batch; the weights do not, and quantising the weights leaves the cache as it is."
            + (f" Without GQA ({calc.n_heads} K/V heads) the cache would be {human_bytes(without_gqa)}."
               if without_gqa != cache_bytes else ""))


def long_context_caption(big) -> str:
    return (f"At long context the cache outgrows everything: a 70B model with GQA keeps "
            f"{human_bytes(big.cache_bytes())} of 16-bit cache for one 128K-token sequence.")


# ---------------------------------------------------------------- 6 · prefill vs decode
TAKE_A_STEP = ("Take a decode step (Next token) to compare its time with the prefill. Only steps this tab ran alone "
               "are timed: a pass shared with other tabs' steps carries their rows too.")
SHORT_PROMPT = "With a very short prompt the prefill has little to share per token; try a longer prompt."


SHARED_READS = 2.0  # a decode step costing this many prompt tokens or more: the prefill's shared reads paid off


def phase_reading(ratio: float) -> str:
    """What the measured ratio (one decode step ÷ one prompt token of the prefill) says, in words."""
    if math.isnan(ratio):  # no decode step timed yet
        return "Take a decode step to compare."
    if ratio >= SHARED_READS:
        return (f"Here a prompt token cost {ratio:.1f}× less than a decode step: most of a decode step's time goes "
                "to what the prefill shares among its tokens (reading every weight, and the fixed cost of a pass), "
                "not to arithmetic per token. That is the pattern of a memory-bound decode step; the *Naive vs KV "
                "cache* page checks it against this machine's ridge point.")
    if ratio > 1 / SHARED_READS:
        return (f"Here a prompt token cost about as much as a decode step ({ratio:.1f}×): sharing one read of the "
                "weights among the prompt's tokens saved little, so on this machine the arithmetic per token weighs "
                "about as much as the reading, and neither phase is clearly memory-bound. A processor with a higher "
                "ridge point (a GPU) would usually show a wider gap.")
    return (f"Here a prompt token cost more than a whole decode step ({1 / ratio:.1f}×): one-off costs of the "
            "first pass, or other work on the machine, can do that to a single timing. A longer prompt gives a "
            "steadier figure.")


def phase_text(times: PhaseTimes) -> str:
    """The measured times, and what their ratio says about what limits each phase on this machine."""
    return (f"Prefill: {times.prefill_ms:.1f} ms for {times.prefill_tokens} prompt tokens = "
            f"**{times.prefill_ms_per_token:.2f} ms per token**. Decode step: **{times.decode_ms_median:.2f} "
            f"ms** (median of {times.decode_steps} forward passes this tab ran alone, none shared with other tabs' "
            f"steps), {times.ratio:.1f}× the prefill cost per token."
            "\n\nThe prefill pushes many tokens through each weight matrix at once; a decode step reads every "
            "weight and the whole cache to produce one token. " + phase_reading(times.ratio))


WHY_EXACT = ("**Why reusing the cache changes nothing.** Under the causal mask a position attends only to "
             "itself and the positions before it, so its keys and values in every layer are computed from "
             "the tokens up to it and nothing later. Appending a token cannot change them: a decode step may "
             "reuse them instead of recomputing. Check it on this text: one fresh pass over every token, "
             "without the cache, and compare.")
RECOMPUTE_BUTTON = "Recompute every cached key and value from scratch"


def _layers(n: int) -> str:
    return "1 layer" if n == 1 else f"{n:,} layers"


def recompute_compared(check) -> str:
    """Which positions the check compared in which layers: every position where each layer's cache holds them all,
    else per group of layers the last ones its cache keeps (a sliding layer's window), from ``check.compared``."""
    total = check.positions
    if all(n == total for n in check.compared):
        return f"Recomputed {total:,} positions × {check.layers} layers in one pass without the cache."
    groups = []
    if full := sum(n == total for n in check.compared):
        groups.append(f"all {total:,} positions in {_layers(full)}")
    for kept in sorted({n for n in check.compared if n != total}):
        count = sum(n == kept for n in check.compared)
        span = f"position {total - 1:,}" if kept == 1 else f"positions {total - kept:,} … {total - 1:,}"
        layers = "1 sliding layer, which keeps" if count == 1 else f"{count:,} sliding layers, which keep"
        groups.append(f"the last {kept:,} ({span}) in {layers} only those")
    return (f"Recomputed {total:,} positions in one pass without the cache and compared what each layer's cache "
            f"holds: {' and '.join(groups)}.")


def recompute_text(check) -> str:
    """What the comparison found (``check``: ``cache_exact.RecomputeCheck``), with its own numbers."""
    relative, bound_value = apart(check.relative, check.rounding_bound)
    said = (f"{recompute_compared(check)} "
            f"Largest difference from the cached keys and values: {check.max_abs_diff:.2g}, on values up to "
            f"{check.largest_value:.3g} (a relative {relative}). ")
    if check.max_abs_diff == 0:
        return said + ("They are identical, bit for bit: the cache holds exactly what this one pass over the same "
                       "tokens computes, as it does when the prefill alone filled it.")
    bound = f"up to {bound_value} relative, {check.rounding_eps} times {check.dtype}'s machine epsilon"
    if check.within_rounding:
        return said + (f"That is floating-point rounding ({bound}): the passes that filled the cache and this one "
                       "add the same numbers in a different order, not a different result.")
    return said + (f"That is larger than rounding ({bound}): the cache does not hold the same keys and values as a "
                   "fresh pass over these tokens.")


def recompute_rows(check) -> list[dict]:
    """One row per layer: its largest difference, for the table under the sentence."""
    return [{"layer": i, "largest |cached − recomputed|": d, "positions compared": n}
            for i, (n, d) in enumerate(zip(check.compared, check.per_layer, strict=True))]


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
CHECK_NOT_CAPTURED = ("the newest token's attention was not captured (its step was taken on another page): press Next "
                      "token on this page, then check again.")
CHECK_NOT_RECOMPUTABLE = ("this page cannot recompute attention for this model's layers, so no step records the "
                          "newest token's attention row.")
NONE_OF_THE_CHOICES = "its attention row has {keys:,} weights, none of the choices."
KEYS_ALL_SLIDING = ("every layer of this model slides over the last {window:,} positions, so its query scored only "
                    "{window:,} keys (the cache's {window_less:,} and its own), not all {keys:,} positions: none of "
                    "the choices.")
KEYS_SOME_SLIDING = ("That is in the layers that see every position; {n} of the {layers} layers slide over the last "
                     "{window:,} positions, and there the query scored only {window:,} keys.")
ATTENTION_KEYS = ("The newest token sits at position {pos:,} of the cache (counting from 0, so {pos:,} tokens came "
                  "before it). Over how many keys did its query attend?",
                  ("{pos:,}", "{pos_plus:,}", "just 1"),
                  "**{keys:,}**, read just now from the length of its attention row: its own key and value were "
                  "appended to the cache first, then its query scored every cached key, its own included.")
ATTENTION_FOCUS = ("Averaged over the heads of layer {layer}, does the newest token's query put more than half of its "
                   "weight on one single key?",
                   ("yes, more than half on one key", "no, it is spread out more"),
                   "Read from its attention row: the largest mean weight in layer {layer} is **{top:.1%}**, on "
                   "position {pos} (“{label}”); the very first token got {first:.1%}. {reading}")
FOCUS_ON_FIRST = ("Here the first token took the most: heads with nothing useful to read often park their weight on "
                  "it (an “attention sink”).")
FOCUS_ELSEWHERE = "Try another layer with the slider and ask again: each layer spreads its weight differently."
ATTENTION_GROWTH = ("How much does this model's KV cache grow with every token?",
                    ("under 10 KiB", "10 KiB to 100 KiB", "100 KiB to 1 MiB", "more than 1 MiB"),
                    "**{per_token}** per token: 2 (K and V) × {layers} layers × {kv_heads} KV heads × {head_dim} "
                    "dims × {bytes:g} bytes. A 2,048-token text needs {at_2048}.")


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
WHERE_IT_LOOKED = "1 · Where it looked"
WHERE_ASK_FIRST_TOKEN = ("Look at the weight on the very first token in several heads. Where a head puts a lot there, "
                         "what might that token be doing for it?")


def where_try(n_layers: int) -> str:
    """The Try beside "Where it looked": which layers to compare, for this model's count of layers."""
    if n_layers >= 3:
        return ("Step a few times and switch between the first layer, a middle one and the last: where does the "
                "weight go in each?")
    if n_layers == 2:
        return "Step a few times and switch between the two layers: where does the weight go in each?"
    return ("Step a few times and switch between heads: where does the weight go in each, and does it stay on the "
            "same keys as the text grows?")


GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    WHERE_IT_LOOKED: (
        "One row of weights per head: how much the newest token's query drew from each earlier position. Each "
        "row adds up to 1.",
        where_try(3),  # ``sliding_text.guides_for`` puts the loaded model's own layer count in
        WHERE_ASK_FIRST_TOKEN),
    "2 · Causal triangle": (
        "Each row is a query, each column a key; everything above the diagonal is empty because a token may not "
        "look at tokens after it.",
        "Press Next token and watch the triangle gain exactly one row and one column.",
        "If earlier rows never change when a token is added, what does the model not need to recompute?"),
    "3 · Grouped-query attention": (
        "Each query head reads one stored key/value head; under grouped-query attention several share one, and the "
        "colours show which queries read the same cache (a model without it gives every query head its own).",
        "Compare heads of one colour: do queries that share keys still look at different places? Without grouping, "
        "compare any two heads.",
        "What does sharing K and V between heads save, and what might it cost?"),
    "4 · KV cache": (
        "The cache bytes are measured from the tensors themselves and set next to the formula "
        "2 × layers × KV heads × head size × positions × bytes.",
        "Step ten times and check that the measured size grows by the same amount every step.",
        "Why is the cache exact: why would recomputing the old keys and values give the same numbers?"),
    "5 · Memory calculator": (
        "The same formula, for models you cannot run here: the cache grows with layers, KV heads, length and batch.",
        "Pick the 70B model at 4K tokens, then switch grouped-query attention off and compare the totals.",
        "For a long chat, which becomes the bigger problem: the weights or the cache?"),
    "6 · Prefill vs decode": (
        "The prefill reads the whole prompt in one pass; each decode step reads one new token. Compare the time "
        "per token of each: does reading every weight once for many tokens make a prompt token cheaper?",
        "Lengthen the prompt and step again: which of the two times moves?",
        "Why does the first token of an answer take longer to appear than the ones after it?"),
}
