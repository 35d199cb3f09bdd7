"""What the cost page says next to its race and counts: pure functions of the model's shape and the measurements."""
from __future__ import annotations

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments.kv_cost import CostPoint
from autoreg_ui.format import human_bytes, ratio

INTRO = (
    "Without a cache, the step that writes token L recomputes every earlier position, so T tokens cost "
    "1 + 2 + … + T positions through the weights: quadratic. With the **KV cache** each decode step "
    "feeds one new position and reads the keys and values of the others from the cache: linear in the weights' "
    "work, while attention over the cache still grows with L. Here it is counted and measured on the loaded "
    "model, on this machine.")
RACE = (
    "For each sequence length **L** we time two ways of producing the token at position L: a **decode step** "
    "that feeds one token and reads the other L − 1 from the **KV cache**, and a **naive step** that pushes all "
    "L tokens through the model again (no cache: a full prefill every step). Only the last position's logits "
    "are computed either way. Shortest lengths first; each point is the fastest of a few repeats (other work on "
    "the machine only ever adds time).")
F_NAIVE = (r"F_{\text{naive}}(L) = \underbrace{2N_{\text{body}}\,L}_{\text{all }L\text{ positions}}"
           r" + \underbrace{2dV}_{\text{logits}}"
           r" + \underbrace{4\,n_l n_h d_h \tfrac{L(L+1)}{2}}_{\text{causal attention}}")
F_CACHE = (r"F_{\text{cache}}(L) = \underbrace{2N_{\text{body}}}_{\text{one position}} + 2dV"
           r" + \underbrace{4\,n_l n_h d_h\,L}_{\text{one query, }L\text{ keys}}")
SUMS = (
    r"Summed over the steps L = 1 … T, the positions processed are $\sum_{L=1}^{T} L = \frac{T(T+1)}{2}$ without "
    "the cache and $T$ with it. **The cache removes the recomputed projections and MLPs of earlier positions, "
    r"not the attention over them:** the cached run still does $\frac{T(T+1)}{2}$ dot products per layer and head "
    r"in total (the naive run does $\frac{T(T+1)(T+2)}{6}$), as the table shows.")


FLOPS_DERIVATION = "How the FLOPs are counted: the two formulas"
INTENSITY_DERIVATION = "How the bytes and the arithmetic intensity are counted"
ROOFLINE_DERIVATION = "How the roofline's points are placed"
ROOFLINE_POINTS = ("Points are the FLOP counts divided by the measured times. The naive intensity counts the weights "
                   "read once per pass and ignores activations.")


def your_sequence(n_tokens: int, cache_positions: int, measured_bytes: int, formula_bytes: int) -> str:
    """The learner's own sequence, tied to the race: its length and its cache, measured and by the formula."""
    return (f"Your sequence: {n_tokens} tokens; its KV cache holds {cache_positions} positions, "
            f"{human_bytes(measured_bytes)} measured ({human_bytes(formula_bytes)} by the formula). Every step "
            "adds one position and one decode step of the race below.")


def press_run(kept_lengths: list[int]) -> str:
    kept = f" Results are kept for: {', '.join(map(str, kept_lengths))}." if kept_lengths else ""
    return "Press **Run the race** to measure this model on this machine." + kept


def measured_on(device: str, dtype: str, model: str) -> str:
    return (f"Measured on {device} · {dtype} · {model}. Times are wall-clock and move with whatever else the "
            "machine is doing.")


def counts_intro(spec: ModelSpec) -> str:
    """The model's shape, in the symbols of the two FLOP formulas."""
    return (f"Counts from this model's shape: {spec.n_layers} layers, {spec.n_heads} query heads of size "
            f"{spec.head_dim} ({spec.n_kv_heads} KV heads), hidden size d = {spec.hidden}, vocabulary "
            f"V = {spec.vocab:,}, N_body = {spec.body_params:,} weights inside the layers. One multiply-add "
            "counts as 2 FLOPs; the step that produces position L:")


MAX_LENGTH_HELP = ("A naive step pushes all L positions through the layers, so their FLOPs grow in proportion to L, "
                   "and causal attention's with L² (a larger share the longer the text); only the last position's "
                   "logits cost the same at every length. Its measured time need not follow the FLOPs: at short "
                   "lengths fixed costs per step weigh, and a doubling of L can take less than twice the time. The "
                   "race measures the factor. Lengths already measured are kept.")

# Boundaries for reading a measured time ratio per doubling of the length (linear: ×2, quadratic: ×4).
SUBLINEAR_BELOW, LINEAR_BELOW, QUADRATIC_FROM = 1.5, 2.5, 3.5


def growth_reading(ratio_per_doubling: float) -> str:
    """A growth rate in words, from the measured (or counted) time ratio per doubling of the length."""
    r = ratio_per_doubling
    if r < SUBLINEAR_BELOW:
        return f"slower than linear (×{r:.2f} per doubling): fixed costs per step still weigh at these lengths"
    if r < LINEAR_BELOW:
        return f"about linear (×{r:.2f} per doubling)"
    if r < QUADRATIC_FROM:
        return f"faster than linear, short of quadratic (×{r:.2f} per doubling)"
    return f"about quadratic (×{r:.2f} per doubling)"


def naive_growth_sentence(measured: float, short: int, long: int, counted: float, attention_share: float) -> str:
    """How one naive step's time grew from L = ``short`` to ``long``, measured and counted, per doubling;
    ``attention_share``: causal attention's share of a naive step's FLOPs at ``long`` (from the model's shape)."""
    return (f"One naive step's time grew **{growth_reading(measured)}** from L = {short:,} to {long:,}, measured. "
            f"By the counts it grows {growth_reading(counted)}: at L = {long:,} causal attention is "
            f"{attention_share:.0%} of a naive step's FLOPs, and the rest is mostly its 2·N_body·L weight FLOPs. "
            r"Over T tokens the naive steps push $1 + 2 + \dots + T = \frac{T(T+1)}{2}$ positions through the layers "
            r"(quadratic), and their causal attention grows with T³: $\frac{T(T+1)(T+2)}{6}$ scores per head and "
            "layer.")


def attention_share(length: int, share: float, crossover: int) -> str:
    """What attention over the cache costs a cached step at this length, from the model's shape."""
    if share < 0.1:
        where = "here the weights dominate, so a cached step costs nearly the same at short lengths"
    elif length < crossover:
        where = "already a large part: a cached step is not constant-cost, it grows with the text"
    else:
        where = "past the point where reading the cache costs a step more arithmetic than its weights"
    return (f"At L = {length:,} attention over the cache is {share:.1%} of a cached step's FLOPs ({where}). "
            f"Its share grows with L: for this model it equals the layers' weight FLOPs at L ≈ {crossover:,}.")


def decode_reads(spec: ModelSpec, budget, length: int) -> str:
    """What one decode step reads (``budget``: ``batching.StepBudget`` at batch 1) and the work it does with it."""
    return (f"A decode step at L = {length} reads every weight once ({human_bytes(budget.weight_bytes)} at "
            f"{spec.weight_bytes_per_param:g} bytes each) and the whole KV cache ({human_bytes(budget.cache_bytes)}: "
            f"2 × {spec.n_layers} layers × {spec.n_kv_heads} KV heads × {spec.head_dim} × {length} positions × "
            f"{spec.cache_bytes_per_element:g} bytes) to do {budget.flops / 1e6:,.1f} MFLOP of work.")


def intensity_latex(budget) -> str:
    return (r"\text{arithmetic intensity} = \frac{\text{FLOPs}}{\text{bytes read}} = "
            rf"\frac{{{budget.flops / 1e6:,.1f}\ \text{{MFLOP}}}}{{\text{{{human_bytes(budget.bytes_read)}}}}} "
            rf"\approx {budget.intensity:.2f}\ \text{{FLOP/byte}}")


def _side(intensity: float, ridge: float) -> str:
    """Where an intensity sits against the ridge, in words, from the two numbers."""
    if intensity < ridge:
        return f"{ridge / intensity:,.1f}× below this machine's ridge at {ridge:,.1f}"
    return f"{intensity / ridge:,.1f}× past this machine's ridge at {ridge:,.1f}"


def memory_notice(budget) -> str:
    """The Notice line of section 3, from the measured ridge and the step's intensity (``batching.StepBudget``)."""
    pace = ("so reading bytes, not arithmetic, sets its pace here" if budget.intensity < budget.ridge
            else "so arithmetic, not reading bytes, sets its pace here")
    return (f"At L = {budget.L:,} a decode step does {budget.intensity:.2f} FLOP per byte it reads: "
            f"{_side(budget.intensity, budget.ridge)} FLOP/byte (measured now), {pace}.")


def memory_bound(budget, naive_intensity: float) -> str:
    """Which limit a decode step sits under, and a naive step at the same length, from their intensities
    and this machine's measured ridge (``naive_intensity``: ``ModelSpec.arithmetic_intensity(L, cached=False)``)."""
    if budget.intensity < budget.ridge:
        decode = (f"With {budget.intensity:.2f} FLOP/byte, left of this machine's ridge at {budget.ridge:,.1f}, "
                  "a decode step is **memory-bound**: it waits on memory, and the processor could do its arithmetic "
                  "many times over while the weights stream in.")
    else:
        decode = (f"With {budget.intensity:.2f} FLOP/byte, at or right of this machine's ridge at {budget.ridge:,.1f}, "
                  "this decode step is **compute-bound** here: the arithmetic, not the bytes, sets its pace (a long "
                  "cache adds FLOPs, or the measured matmul peak is low).")
    bound = "compute-bound" if naive_intensity >= budget.ridge else "still memory-bound"
    naive = (f" A naive step (like a prefill) uses every weight for all {budget.L:,} positions at once: "
             f"{naive_intensity:,.1f} FLOP/byte, {_side(naive_intensity, budget.ridge)}, so it is {bound} here. ")
    return decode + naive + batched_intensity_sentence(budget)


BATCH_SHOWN = 32  # the batch the sentence quotes (the serving page's largest)


def batched_intensity(budget, batch: int) -> float:
    """FLOP/byte of a decode step of ``batch`` rows at the budget's length: the weights are read once for all
    rows, each row reads its own KV cache and does its own FLOPs (from a ``batching.StepBudget``)."""
    rows = max(1, budget.batch)
    flops, cache = budget.flops / rows, budget.cache_bytes / rows
    return batch * flops / (budget.weight_bytes + batch * cache)


def batched_intensity_sentence(budget) -> str:
    """What batching does to a decode step's intensity at this length, from the byte and FLOP counts."""
    rows = max(1, budget.batch)
    flops, cache = budget.flops / rows, budget.cache_bytes / rows
    text = (f"Batching shares only the weight reads: each row reads its own KV cache. At L = {budget.L:,}, "
            f"{BATCH_SHOWN} rows do {batched_intensity(budget, BATCH_SHOWN):,.2f} FLOP/byte")
    if cache <= 0:
        return text + ", and more rows keep raising it."
    ceiling = flops / cache
    if ceiling <= budget.ridge:
        return (text + f", and no batch gets past {ceiling:,.2f} FLOP/byte (a row's FLOPs ÷ its cache bytes), "
                f"below this machine's ridge at {budget.ridge:,.1f}: at this length a batched decode step stays "
                "memory-bound however many rows share the weights.")
    rows_at_ridge = budget.ridge * budget.weight_bytes / (flops - budget.ridge * cache)
    return (text + f"; about {rows_at_ridge:,.0f} rows would reach this machine's ridge at {budget.ridge:,.1f} "
            f"(no batch gets past {ceiling:,.1f} FLOP/byte, a row's FLOPs ÷ its cache bytes).")


def cpu_vs_gpu(on_cuda: bool, last: CostPoint | None) -> str:
    """Why the measured ratio looks as it does on this device (``last``: the race's longest point, if run)."""
    speed = f" Here the cache wins {ratio(last.speedup)} at L = {last.length}." if last is not None else ""
    grows = (" Either way the naive total's weight work grows as T² against the cache's T (attention adds a T² term "
             "to the cached total too, and a T³ one to the naive), so the cache's advantage keeps growing with length.")
    if on_cuda:
        return ("Running on CUDA: a large GPU has a high ridge point (peak FLOP/s ÷ memory bandwidth), so a naive "
                "step's L positions run on otherwise idle units and, at short lengths, cost about as much as a cached "
                "step's one; the ratio stays near 1 until the extra work fills the GPU." + grows + speed)
    return ("Running on the CPU: its ridge point (peak FLOP/s ÷ memory bandwidth) is low, so a naive step, which does "
            "L times the arithmetic on the same weights, turns compute-bound at small L and every extra position "
            "costs time almost at once. A large GPU, with a much higher ridge, hides those positions at short "
            "lengths." + grows + speed)


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
COST_FLOPS = ("At L = {length:,}, how many times the FLOPs of a cached step does one naive step (recomputing "
              "everything) cost?",
              ("about the same", "2× to 20×", "20× to 200×", "more than 200×"),
              "**{ratio:,.0f}×**: {naive} FLOPs against {cached} (this model's formulas, in the *Count* section). "
              "The naive step pushes all {length:,} positions through every weight; the cached one pushes one.")
COST_GROWTH = ("Does a cached step do more arithmetic at 2,048 tokens than at 128?",
               ("no, exactly the same", "yes, more: attention reads the whole cache", "yes, 16× more"),
               "The weights' FLOPs are the same at every length, but attention over the cache grows with L: a cached "
               "step does **{growth:.0%}** more FLOPs at 2,048 than at 128 for this model ({at_128} vs {at_2048}). "
               "What that does to the time is what the race measures.")
COST_SHARE = ("At L = {length:,}, what share of a cached step's FLOPs is attention over the cache?",
              ("under 10%", "10% to 30%", "30% to 60%", "more than 60%"),
              "**{share:.0%}** for this model: {attention} FLOPs for one query against {length:,} cached keys in every "
              "layer and head, out of {total} for the whole step. Attention alone equals the layers' weight FLOPs "
              "at L ≈ {crossover:,}.")


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "1 · The race": (
        "Each point is measured now: one cached step against recomputing the whole text, at growing lengths.",
        "Run the race to a longer length and watch where the two lines part.",
        "Which part of a cached step's work grows with the length of the text, and which part stays the same?"),
    "2 · Count, don't just time": (
        "The counts come from the model's shape: naively the T-th token re-reads T positions, so the total "
        "grows as T(T+1)/2; with the cache it grows as T.",
        "Double T and check how each total changes.",
        "Timing depends on the machine; counting does not. Which would you trust to compare two laptops?"),
    "3 · Is a decode step memory-bound?": (
        "A decode step reads every weight and the whole cache for one token. Its arithmetic intensity (FLOPs per "
        "byte read) against this processor's ridge point says which of the two sets its pace.",
        "Compare the intensity of a cached step with a naive step at the same length.",
        "What would serving many users in one step do to this intensity, and to the cost of each token?"),
    "4 · CPU vs GPU": (
        "The ratio between naive and cached steps depends on the hardware: the cache always saves work, but how "
        "much time it saves depends on how much parallel compute is idle.",
        "Read the speed-up at the longest length you measured and compare it with the count ratio.",
        "Would the gap between naive and cached be smaller or larger on a big GPU at short lengths?"),
}
