"""What the "Under the hood" page says: the training loss, positions (RoPE and the cache), batch invariance.

Pure functions and constants (no Streamlit). Every sentence with a number takes the number from the engine's
result and picks its words from it (each boundary is tested on both sides).
"""
from __future__ import annotations

import math

TITLE = "Under the hood"
INTRO = ("Three things the model does on every pass that no step shows: the number training makes small, how it "
         "knows where each token sits, and why the same step can give slightly different numbers in a shared pass. "
         "Each is computed here, on the loaded model, from the text of this tab.")
LOSS, POSITIONS, DETERMINISM = "1 · The training loss", "2 · Positions: rotary embeddings and the cache", \
    "3 · Nondeterminism and batch invariance"
AGREE = 1e-4  # two numbers computed two ways "agree" below this (float32 rounding of logits is ~1e-5)

# ---------------------------------------------------------------- 1 · the training loss
LOSS_EXPLAIN = (
    "Training shows the model real text and asks, at every position, for the probability of the token that "
    "**actually** came next. The loss is the **cross-entropy**: the mean of −log p over those next tokens. "
    "Its exponential is the **perplexity**, the number of equally likely tokens the model would be choosing "
    "among on average. Teacher forcing gives all of them in **one** forward pass: the causal mask lets each "
    "position see only itself and the text before it. Below, the loss of *this tab's* text: the prompt and every token "
    "generated so far.")
LOSS_LATEX = (r"\mathcal{L} = -\frac{1}{T-1}\sum_{t=2}^{T}\log p(x_t \mid x_{<t}),\qquad "
              r"\text{perplexity} = e^{\mathcal{L}}")
LOSS_DERIVATION = "Formula: loss, perplexity, nats"
NATS = (f"The logarithm is the natural one, so the loss is in **nats**; one nat is 1 / ln 2 = {1 / math.log(2):.3f} "
        "bits. A loss of 0 means every next token had probability 1. The loss is a mean, so e^(−loss) is the "
        "**geometric mean** of those probabilities: each extra nat divides that mean by e, not any one token's "
        "probability.")
LOSS_RUN = "Compute the loss of this text (one pass)"
LOSS_SPINNER = "One forward pass over the whole text…"
LOSS_CUT = "One pass reads at most {n} tokens here; the text was cut there."


def loss_sentence(tokens: int, loss: float, perplexity: float, hits: int) -> str:
    terms = tokens - 1
    return (f"{tokens:,} tokens give **{terms:,}** next-token terms from one pass. Their mean, the loss, is "
            f"**{loss:.3f} nats**; perplexity e^{loss:.3f} = **{perplexity:,.1f}**: on average the model was as "
            f"unsure as a fair choice among {perplexity:,.1f} tokens. Its own top guess was the actual next token "
            f"at {hits:,} of the {terms:,} positions.")


def parts_sentence(prompt_loss: float, generated_loss: float, n_generated: int) -> str:
    """The prompt's terms against the generated ones (each a mean, nats)."""
    if n_generated == 0 or math.isnan(generated_loss):
        return "Nothing generated yet: every term is a prompt token. Generate a few tokens and compute again."
    if math.isnan(prompt_loss):
        return f"The prompt is one token, so every term is generated: mean {generated_loss:.3f} nats."
    lower = "lower" if generated_loss < prompt_loss else "higher"
    why = (" The model wrote those tokens itself, mostly from the top of its own distribution, so they surprise "
           "it less than text a person chose." if lower == "lower" else
           " Sampling picked tokens the model found unlikely, or tokens were forced: its own text can surprise "
           "it more than the prompt did.")
    return (f"The {n_generated:,} generated tokens have a mean loss of **{generated_loss:.3f} nats**, {lower} than "
            f"the prompt's **{prompt_loss:.3f}**.{why}")


def records_sentence(gap: float, compared: int, shared: int) -> str:
    """The one-pass loss of each generated token against −log p the step recorded while generating; ``shared``: how
    many of those steps chose from logits of a pass shared with other tabs' steps (``shared_pass_steps``).

    The result is stamped with the text, so the tokens are the ones the steps chose: a gap is arithmetic."""
    if compared == 0:
        return "No generated token to compare with the steps yet."
    if gap < AGREE:
        return (f"For the {compared:,} generated tokens, each one-pass term equals −(the log-prob the step "
                f"recorded) to **{gap:.1e} nats**: the loss is built from the very numbers the steps produced.")
    said = (f"For the {compared:,} generated tokens, the one-pass terms and the recorded log-probs differ by up to "
            f"**{gap:.1e} nats**, more than {AGREE:.0e}. The tokens are the same; the sums are not. ")
    if shared:
        return said + (f"{shared:,} of these steps chose from logits of a decode pass that also carried other tabs' "
                       "steps, and a shared pass pads the rows and adds in another order (section 3 measures how far "
                       "that moves the logits).")
    return said + ("No step here is recorded as sharing its pass with other tabs, so this is the rounding of two "
                   "ways to compute the same numbers: the prefill and one-token passes on the cache, and one pass "
                   "over the whole text, which multiply in other shapes and add in another order.")


# ---------------------------------------------------------------- 2 · positions
ROPE_EXPLAIN = (
    "Attention's scores alone are blind to order: a query's dot product with a key is the same wherever the two "
    "tokens sit. The causal mask already breaks that symmetry, since each position sees only itself and what came "
    "before it, and models with no position encoding at all learn positions from the mask alone (Haviv et al., "
    "2022). Rotary embeddings put the distance between two tokens into every score directly: Llama-style models, "
    "this one too, **rotate** each query and key. A head's d numbers are taken in pairs, and pair "
    "i is turned by the angle θᵢ = pos · base^(−2i/d), with `base` the config's `rope_theta`. A query at m "
    "and a key at n then meet at the angle difference (m − n)·base^(−2i/d): attention sees how far apart "
    "two tokens are. Below: the position ids of the steps, the angles, a cached key recomputed, left "
    "padding, and a position that is off by one.")
ROPE_LATEX = r"\theta_i = \text{pos}\cdot \text{base}^{-2i/d},\quad i = 0,\dots,\tfrac{d}{2}-1"
ROPE_DERIVATION = "Formula: each pair's angle"
POSITION_IDS_TITLE = "The position ids of the steps"


def earlier_steps(first: int, last: int) -> str:
    """The position table's row for the steps it folds together (only the most recent get a row each)."""
    return f"steps {first} … {last}" if last > first else f"step {first}"
ANGLES_TITLE = "The rotation's angle per dimension pair"
KEY_TITLE = "A cached key is stored already rotated"
SHIFT_TITLE = "Off by one: the last token at the wrong position"
PAD_TITLE = "Left padding needs its own position ids"
ANGLE_POSITION = "Position"
KEY_POSITION, KEY_LAYER = "Position of the key", "Layer"
KEY_RUN = "Recompute this key and compare it with the cache"
SHIFT_RUN = "Run the last step with its position shifted by one"
PAD_RUN = "Batch this text with a longer one (left padding)"


def rope_sentence(base: float, head_dim: int, rope_type: str) -> str:
    kind = "" if rope_type == "default" else (f" (its `rope_type` is {rope_type}: the frequencies are rescaled, "
                                              "so the plain formula is an approximation here)")
    return (f"This model's config: `rope_theta` = {base:,.0f}, head dimension d = {head_dim}, so "
            f"{head_dim // 2} pairs per head{kind}.")


def positions_sentence(prompt_len: int, total: int) -> str:
    nxt = total
    return (f"The prefill fed the {prompt_len:,} prompt tokens at positions 0 … {prompt_len - 1:,} in one pass. Each "
            f"decode step feeds one token at the position equal to the cache's length before it: the next step, "
            f"with {total:,} tokens cached, uses position **{nxt:,}**.")


def angles_sentence(position: int, first: float, last: float, pairs: int) -> str:
    turns = first / (2 * math.pi)
    return (f"At position {position:,}, pair 0 has turned by {first:,.2f} rad ({turns:,.2f} full turns) and pair "
            f"{pairs - 1} by {last:.2e} rad. The fast pairs tell neighbours apart; the slow ones still change "
            "over thousands of positions.")


def key_sentence(gap: float, gap_unrotated: float, gap_other: float, position: int, layer: int) -> str:
    if gap < AGREE:
        same = (f"equals the cache entry to **{gap:.1e}**: the cache stores keys already rotated by their own "
                "position, so a key never needs recomputing as the text grows.")
    else:
        same = (f"differs from the cache entry by **{gap:.1e}**, more than float rounding: this model does not "
                "store its keys the plain Llama way.")
    return (f"Layer {layer}, position {position:,}: k_proj(norm(h)) rotated by θ at {position:,} {same} Before the "
            f"rotation the same key is {gap_unrotated:.2f} away from the entry; rotated for another position, "
            f"{gap_other:.2f}.")


def shift_sentence(shift: int, delta_last: float, kl_last: float, changed_last: bool, delta_all: float,
                   kl_all: float) -> str:
    top = ("the top token **changes**" if changed_last else "the top token stays the same")
    whole = ("almost nothing" if delta_all < AGREE * 10 else "a little too")
    return (f"Feeding only the last token {shift} position late moves the logits by up to **{delta_last:.2f}** "
            f"(KL {kl_last:.3g} bits), and {top}: its query no longer sits where its keys expect. Shifting the "
            f"**whole** text by {shift} changes {whole} (max |Δ| {delta_all:.1e}, KL {kl_all:.1e} bits): "
            "rotary positions only encode how far apart tokens are.")


def pad_sentence(lengths: list[int], width: int, delta_own: float, delta_column: float, changed: bool) -> str:
    short = lengths[0]
    pads = width - short
    top = "and its top token changes" if changed else "though its top token happens to stay"
    own = "the same as alone" if delta_own < AGREE * 10 else "close to alone"
    return (f"Your row has {short:,} real tokens, so it gets {pads:,} pad columns on the left. The batcher feeds its "
            f"next token at position **{short:,}** (its own count): {own} (max |Δ| {delta_own:.1e}). Counted by "
            f"columns it would sit at {width:,}, {pads:,} positions too far: max |Δ| **{delta_column:.2f}**, {top}.")


# ---------------------------------------------------------------- 3 · nondeterminism and batch invariance
DETERMINISM_EXPLAIN = (
    "When several tabs step at once, this server runs their decode steps as one forward pass (the batcher). "
    "Each row should compute exactly what it computes alone, but floating-point sums depend on their order, "
    "and a pass over more rows, padded to a common length, adds in another order, so the logits can come out "
    "a little different. Greedy decoding takes the argmax, so the difference matters only when the top two "
    "logits are nearly tied. Below, your last step: alone, then as the first row of shared passes with the "
    "example prompts as other tabs.")
BATCH_RUN = "Compute my last step alone and in shared passes"
SEARCH_RUN = "Search for a prompt where the batch flips a greedy token"
SEARCH_SPINNER = "Comparing solo and shared passes…"
NOTHING_CACHED = "This text has one token: a decode step needs one token cached and one fed."


def step_label(has_records: bool, index: int) -> str:
    return f"step {index} (the one that chose its token)" if has_records else "the next step (nothing generated yet)"


def batch_sentence(which: str, max_delta: float, gap: float, rows: list[int]) -> str:
    sizes = ", ".join(str(r) for r in rows)
    zero = " (bit for bit the same)" if max_delta == 0 else ""
    return (f"For {which}: computed alone and as one row of {sizes}-row passes, the logits differ by at most "
            f"**{max_delta:.1e}**{zero}. The top two logits are **{gap:.3g}** apart.")


def flip_sentence(gap: float, max_delta: float) -> str:
    """Could a difference this size swap the top two? Only if the gap is at most twice it."""
    need = 2 * max_delta
    if max_delta == 0:
        return ("The shared passes measured here gave exactly the solo numbers, so none of them changed this "
                "choice.")
    if gap <= need:
        return (f"The gap ({gap:.2e}) is within twice the difference ({need:.2e}): the top two could swap, so "
                "which batch this step lands in can change the greedy token.")
    return (f"To flip, the top two would have to be within twice the difference, **{need:.1e}**; here they are "
            f"{gap / need:,.0f}× further apart, so none of the shared passes measured here changes this greedy "
            "token. Other companions move the logits by other amounts.")


def api_sentence(max_delta: float, gap: float, machine: str) -> str:
    """What the measurement says about a temperature-0 API; ``machine``: where it ran (``machine_label``)."""
    if max_delta == 0:
        here = f"here ({machine}) the shared passes measured gave exactly the solo logits"
    else:
        this = ("within twice that, so its greedy token could go either way" if gap <= 2 * max_delta
                else "wider than twice that, so its greedy token stayed")
        here = (f"here ({machine}) the shared passes measured moved them by up to {max_delta:.1e}, and this step's "
                f"gap ({gap:.2g}) is {this}")
    return (f"A temperature-0 API takes the argmax of logits like these, and its server batches your request with "
            f"whoever else is asking: {here}. That is one machine's rounding. GPU servers often compute in bf16, "
            "which keeps 8 significant bits where float32 keeps 24, and there flips do happen: Thinking Machines "
            "(2025) sent one prompt to Qwen3-235B 1,000 times at temperature 0 and got 80 different completions. "
            "Every token after a step that tips follows that choice.")


def machine_label(device: str, dtype: str) -> str:
    """Where a measurement ran, as the API sentence names it: ``cpu``, ``float32`` → "CPU, float32"."""
    kind = device.split(":")[0]
    return f"{ {'cpu': 'CPU', 'cuda': 'GPU', 'mps': 'Apple GPU'}.get(kind, kind)}, {dtype}"


def sizes_list(sizes: tuple[int, ...]) -> str:
    """(2, 4, 8) → "2, 4 and 8"."""
    return ", ".join(str(r) for r in sizes[:-1]) + f" and {sizes[-1]}" if len(sizes) > 1 else str(sizes[0])


def search_bounds(prompts: int, steps_each: int, max_steps: int, budget_s: float, sizes: tuple[int, ...]) -> str:
    rows = sizes_list(sizes)
    return (f"The search: the {prompts} example prompts, each followed for up to {steps_each} greedy steps (at most "
            f"{max_steps} steps, {budget_s:.0f} s), every step compared alone and in passes of {rows} rows; it "
            "stops at the first flip, and waits its turn behind other measurements on this server.")


def search_found(rows: int, solo: str, batched: str, gap: float, max_delta: float, text: str) -> str:
    return (f"**Found one.** After “{text}”, the solo pass picks “{solo}” and a {rows}-row pass picks “{batched}”: "
            f"the top two were {gap:.2e} apart and the logits moved by up to {max_delta:.2e}.")


def search_none(texts: int, steps: int, passes: int, stopped: bool, gap: float, max_delta: float) -> str:
    cut = " It stopped at its bound of steps or time." if stopped else ""
    closest = (f" The closest call had its top two {gap:.2e} apart; the largest difference was {max_delta:.1e}, "
               f"so it needed a gap below {2 * max_delta:.1e}.") if math.isfinite(gap) else ""
    return (f"**No flip found.** Searched {texts:,} texts, {steps:,} greedy steps, {passes:,} shared passes.{cut}"
            f"{closest} A server answering millions of steps a day gets that many more chances to meet one.")


# ---------------------------------------------------------------- predict, then check (questions.py)
LOSS_CLOSE = "**About the same**: the two means are within 10% of each other. "
NEED_TOKENS = "this text needs at least two tokens."
NEED_STEP = "press Next token first: the question is about the last generated step."
PROMPT_FILLS_PASS = "the prompt fills the {n:,} tokens one pass reads here, so no generated token is scored."
Q_LOSS_PARTS = ("In {part}, which tokens have the higher mean loss (−log p): the {prompt:,} prompt tokens or "
                "the {generated:,} the model generated?",
                ("the prompt's", "the generated ones", "about the same (within 10%)"),
                "{sentence}")
Q_PERPLEXITY = ("The loss of {part}, as a perplexity: the model was as unsure as a fair choice among how "
                "many tokens?", ("fewer than 10", "10 to 100", "more than 100"),
                "Computed now in one pass over {n:,} tokens: loss **{loss:.3f} nats**, perplexity "
                "**{perplexity:,.1f}**.")
Q_POSITION = ("The text has {n:,} tokens, all in the cache. At which position id does the next decode step feed "
              "its token?", ("{before:,}", "{n:,}", "{after:,}"),
              "**{n:,}**: positions count from 0, so the cache holds 0 … {before:,}. {check}")
Q_WHOLE_SHIFT = ("Shift every position of {part} by one (1 … {n:,} instead of 0 … {before:,}). How much do the "
                 "next-token logits change?", ("hardly at all (below 0.001)", "noticeably (0.001 or more)"),
                 "Max |Δ logit| **{delta:.1e}** (KL {kl:.1e} bits): rotary positions encode the distance between "
                 "tokens, and shifting everything keeps every distance.")
Q_BATCH_DIFF = ("Your last step computed alone, then as one row of a shared pass with other texts: how large is the "
                "largest difference between the two sets of logits?",
                ("exactly 0", "above 0 but below 0.001", "0.001 or more"),
                "Computed now: at most **{delta:.1e}** over {rows} pass sizes. {reading}")
Q_FLIP = ("Your last step's top two logits are {gap} apart. Could one of the shared passes this page measures "
          "({sizes} rows, the app's example texts as the other tabs) change its greedy token?", ("yes", "no"),
          "{sentence}")
DIFF_ZERO = "The shared passes happened to add in the same order as the solo one."
DIFF_SMALL = "Float rounding: the same sums, added in another order."
DIFF_LARGE = "More than rounding usually gives: a busy machine does not change arithmetic, so look again."


def text_part(read: int, total: int, end: str) -> str:
    """What a question's pass reads: the whole text, or (past the most one pass reads) its ``end`` ("first" or
    "last") ``read`` tokens."""
    return "this text" if read >= total else f"this text's {end} {read:,} tokens (as many as one pass reads here)"


def position_check(read: int, total: int, delta: float, kl_bits: float, changed: bool) -> str:
    """The position question's check: the last step of the ``read`` tokens it ran on, fed one position late."""
    top = "changed" if changed else "unchanged"
    where = (f"the step that fed the last token at {read - 1:,}" if read >= total else
             f"the last {read:,} tokens (as many as one pass reads here), read as a text of their own: the step "
             f"that fed their last token at {read - 1:,}")
    return (f"Checked on {where}: fed one position later instead, its logits move by up to {delta:.2f} "
            f"(KL {kl_bits:.3g} bits, top token {top}).")

# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {
    LOSS: (
        "Each bar is one token's −log p from a single pass; the marks on the generated ones are the log-probs "
        "the steps recorded, sign flipped, so each bar can be checked against its step.",
        "Force an unlikely token (on the Inside generation page), come back and compute again: which bar jumps, "
        "and how much does the loss move?",
        "Why does training use the mean of −log p rather than counting how often the top guess was right?"),
    POSITIONS: (
        "Three measurements side by side: a cached key against the key recomputed at its position, the last "
        "token moved by one position, and the whole text moved by one.",
        "Set the angle chart's position to 1 and then to 1,000: which pairs have turned more than a full circle?",
        "If the keys were stored before rotation, what would every decode step have to redo?"),
    DETERMINISM: (
        "The chart puts the largest solo-vs-shared difference beside half the gap between the top two tokens: "
        "a greedy token can flip only where the bar reaches the line.",
        "Generate until the model hesitates between two tokens (see the step page's top bars), then compare "
        "again: how small is the gap now?",
        "A temperature-0 API gave two different answers to the same prompt: what besides a bug could explain it?"),
}
