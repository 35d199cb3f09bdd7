"""What the attention page says about a model with sliding-window layers (Mistral, Gemma 2): the keys a query in a
sliding layer weighs, the triangle's masked band, the cache that stops growing. Each function is the sliding
counterpart of one in ``text``, which a model without sliding layers keeps using unchanged.

Pure functions and constants (no Streamlit); every count comes from ``ModelSpec`` (``layer_windows``,
``positions_kept``, ``cache_bytes``).
"""
from __future__ import annotations

from autoreg_core.engine.kv_cache import WorkedExample
from autoreg_core.engine.model_spec import ModelSpec
from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.attention.text import (
    DECODE_STEP_INTRO,
    GUIDES,
    WHERE_ASK_FIRST_TOKEN,
    WHERE_IT_LOOKED,
    where_try,
)


def window_of(spec: ModelSpec, layer: int) -> int | None:
    """The sliding window of ``layer`` (None: the layer sees every position)."""
    return spec.layer_windows[layer] if 0 <= layer < len(spec.layer_windows) else None


def decode_step_intro(window: int | None) -> str:
    """The decode step in one sentence, for the selected layer: all t + 1 positions, or at most its window."""
    if window is None:
        return DECODE_STEP_INTRO
    return ("With the cache, a decode step computes one query $q_t$ (per head) for its new position t, adds that "
            f"position's key and value to the cache, and in this **sliding layer** (window W = {window:,}) reads the "
            "keys and values of at most the last W positions $t-W+1 … t$, its own included; earlier keys are masked "
            "and this layer's cache no longer keeps them:")


SOFTMAX_LATEX_SLIDING = r"a_t=\operatorname{softmax}\!\Big(\frac{q_t K_{t-W<i\le t}^{\top}}{\sqrt{d}}\Big)"
MIX_LATEX_SLIDING = r"o_t = a_t\,V_{t-W<i\le t}"


def sliding_weights_text(head_dim: int, n_rows: int, window: int) -> str:
    """``weights_text`` for a sliding layer: the query at position n_rows − 1 weighs at most ``window`` keys, and the
    layer's cache keeps window − 1 positions once full (``ModelSpec.positions_kept``)."""
    seen = min(n_rows, window)
    if n_rows <= window - 1:  # the cache still holds every position
        return (f"Here $d={head_dim}$ and $K$, $V$ are ${n_rows}\\times{head_dim}$ per head: the text is still shorter "
                f"than this layer's window of {window:,}, so $a_t$ has **{n_rows}** weights that add up to 1, one per "
                f"cached token. Once the text is longer, the layer keeps only the last {window - 1:,} positions and "
                "the query weighs those and its own: at most "
                f"{window:,} keys. They never look ahead: the future is not in the cache yet.")
    masked = n_rows - seen
    outside = ("" if not masked else
               " The earlier position 0 is outside the window: the mask gives it weight 0 and this layer's cache has "
               "dropped it." if masked == 1 else
               f" The {masked:,} earlier positions (0 to {masked - 1:,}) are outside the window: the mask gives them "
               "weight 0 and this layer's cache has dropped them.")
    return (f"Here $d={head_dim}$ and the query weighs only the keys in this layer's window of {window:,}, its own "
            f"included: $K$, $V$ are ${seen}\\times{head_dim}$ per head, so $a_t$ has **{seen}** weights that add up "
            f"to 1, one per key in the window. Between passes this layer's cache keeps the last {window - 1:,} "
            f"positions; a decode step's own key and value complete the window.{outside} They never look ahead: "
            "the future is not in the cache yet.")

def sliding_bar_title(where: str, position: int, window: int) -> str:
    """``bar_title`` for a sliding layer: which keys lie in the query's window; the ones before it get 0."""
    first = max(0, position - window + 1)
    if not first:
        return (f"{where}<br>The weights that the query at position {position} gave the keys at positions 0 to "
                f"{position}, its own included: all inside its window of {window:,}.")
    return (f"{where}<br>The weights that the query at position {position} gave the keys in its window of {window:,}, "
            f"positions {first} to {position}, its own included; "
            + ("key 0 is outside it and gets" if first == 1 else f"keys 0 to {first - 1} are outside it and get")
            + " weight 0 from the mask.")

def sliding_triangle_text(prompt_len: int, n_rows: int, n_steps: int, window: int) -> str:
    """``triangle_text`` for a sliding layer: the window masks keys W or more positions back, drawn blank like the
    future."""
    return (f"Row $q$ is where the token at position $q$ looked; columns are the keys. The **{prompt_len} "
            "prefill rows** (grey strip) came from one pass over the prompt; each **decode step** (blue strip) "
            "added one row. Above the diagonal is the future: masked, blank. This is a **sliding layer** with a "
            f"window of {window:,}: a query sees only itself and the {window - 1:,} keys before it, so once a row is "
            f"longer than {window:,} keys, the keys further left are masked too and drawn blank; each row's weights "
            f"form a band along the diagonal, at most {window:,} keys wide. Now: {n_rows} rows, {n_steps} decode "
            "steps.")


OUTSIDE_WINDOW_HOVER = "outside the window: masked"

def example_drops(spec: ModelSpec, ex: WorkedExample) -> bool:
    """Whether a sliding layer drops positions within the worked example (its window fills before its end)."""
    return spec.cache_bytes(ex.positions) != round(spec.cache_bytes_per_position * ex.positions)


def sliding_worked_example_text(ex: WorkedExample, spec: ModelSpec, model: str, dtype: str) -> str:
    """``worked_example_text`` for a model whose sliding layers fill their window within the example: every number
    from ``spec.cache_bytes``, which counts what each sliding layer keeps."""
    windows = sorted({w for w in spec.layer_windows if w is not None})
    window = (f"a window of {windows[0]:,} (keeping the last {windows[0] - 1:,} positions)" if len(windows) == 1
              else "sliding windows")
    n_sliding = len(spec.sliding_layers)
    layers = (("both of its layers" if spec.n_layers == 2 else f"all {spec.n_layers} of its layers")
              if n_sliding >= spec.n_layers else
              f"{n_sliding} of its {spec.n_layers} layers")
    after_prefill_adds = spec.cache_bytes(ex.prompt_tokens + 1) - ex.after_prefill
    last_adds = spec.cache_bytes(ex.positions + 1) - ex.at_end
    if after_prefill_adds == last_adds:
        growth = (f"each new token adds {human_bytes(last_adds)} (the layers that see every position)" if last_adds
                  else "each new token's keys and values replace the oldest ones kept, so the cache stays this size")
    else:
        growth = (f"the first new token adds {human_bytes(after_prefill_adds)}, and once the windows are full each "
                  + (f"adds {human_bytes(last_adds)} (the layers that see every position)" if last_adds else
                     "adds nothing: its keys and values replace the oldest ones kept"))
    return (f"**The worked example, with this model's numbers.** A {ex.prompt_tokens}-token prompt, then "
            f"{ex.new_tokens} new tokens, on {model} ({dtype} cache), with {window} in {layers}: the "
            f"prefill feeds {ex.prompt_tokens} positions at once and the cache holds {human_bytes(ex.after_prefill)} "
            f"after it; {growth}. Once the {ex.new_tokens}th is fed in, the text has {ex.positions} positions and the "
            f"cache holds **{human_bytes(ex.at_end)}** ({ex.at_end:,} bytes), where {ex.positions} positions in "
            f"every layer would take {human_bytes(round(spec.cache_bytes_per_position * ex.positions))}. The text "
            f"has {ex.positions} positions and not {ex.positions - 1} because this app feeds every chosen token in at "
            "once, so the next distribution is ready.")


def growth_title(spec: ModelSpec) -> str:
    """The cache chart's title: what its line does for this model (flat once a window is full in sliding layers)."""
    if not spec.sliding_layers:
        return "KV cache: prefill jump, then +1 row per step"
    if len(spec.sliding_layers) >= spec.n_layers:
        return "KV cache: +1 row per step, flat once the window is full"  # fits a half-width chart
    return "KV cache: slower growth once sliding windows are full"


def growth_axis(spec: ModelSpec) -> str:
    """The cache chart's left axis: positions in the cache, or for a sliding model the positions kept."""
    if not spec.sliding_layers:
        return "positions in the cache"
    uniform = len(set(spec.layer_windows)) == 1
    return "positions kept per layer" if uniform else "positions kept, mean over layers"


GROWTH_TEXT_LINE, KEPT_LINE = "positions in the text", "positions kept"


def growth_annotation(spec: ModelSpec, prompt: int, kept: float) -> str:
    """The note at the prefill's jump."""
    if not spec.sliding_layers or kept == prompt:
        return f"prefill: +{prompt} at once"
    mean = "" if len(set(spec.layer_windows)) == 1 else " per layer on average"
    return f"prefill: {prompt} positions, {kept:g} kept{mean}"

SLIDING_TRIANGLE_GUIDE = (
    "Each row is a query, each column a key; above the diagonal is blank because a token may not look at tokens "
    "after it, and in this sliding layer the keys a window or more back are blank too: the mask hides them.",
    "Press Next token and watch the triangle gain one row and one column; once the rows are longer than the window, "
    "the band of weights moves one key to the right with each new row.",
    "If earlier rows never change when a token is added, what does the model not need to recompute?")
SLIDING_CACHE_GUIDE = (
    "The cache bytes are measured from the tensors themselves and set next to the formula "
    "2 × layers × KV heads × head size × positions × bytes, where a sliding layer counts only the positions it keeps.",
    "Step a few times and check what each step adds: a sliding layer grows like the others until it holds "
    "window − 1 positions, then adds nothing. If the text is shorter than that, the Memory calculator's loaded "
    "model shows where the line bends.",
    "Why is the cache exact: why would recomputing the old keys and values give the same numbers?")


def where_ask(window: int | None, query: int | None) -> str:
    """The Ask beside "Where it looked" for the layer shown: about the first token while the query can see it, about
    the window's oldest key once position 0 is outside the window (the query at ``query`` sees query − W + 1 …
    query, so position 0 drops out when query ≥ W)."""
    if window is None or query is None or query < window:
        return WHERE_ASK_FIRST_TOKEN
    oldest = query - window + 1
    return (f"The first token is outside this layer's window of {window:,} now: the mask gives it weight 0 in every "
            f"head. Look at the oldest key still inside, position {oldest:,}, in several heads: where a head puts a "
            "lot there, where might that weight go at the next step, when that key leaves the window?")


def guides_for(spec: ModelSpec, layer: int, query: int | None = None) -> dict[str, tuple[str, str, str]]:
    """The Notice · Try · Ask boxes for this model: "Where it looked" for its layer count and, in a sliding layer,
    the newest query's position (``query``; None before any row is recorded), the triangle's for the selected
    layer, the cache's for the model."""
    boxes = dict(GUIDES)
    notice = GUIDES[WHERE_IT_LOOKED][0]
    boxes[WHERE_IT_LOOKED] = (notice, where_try(spec.n_layers), where_ask(window_of(spec, layer), query))
    if not spec.sliding_layers:
        return boxes
    boxes["4 · KV cache"] = SLIDING_CACHE_GUIDE
    if window_of(spec, layer) is not None:
        boxes["2 · Causal triangle"] = SLIDING_TRIANGLE_GUIDE
    return boxes
