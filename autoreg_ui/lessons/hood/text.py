"""What the "Under the hood" page says: the training loss, positions (RoPE and the cache), batch invariance.

Pure functions and constants (no Streamlit). Every sentence with a number takes the number from the engine's
result and picks its words from it (each boundary is tested on both sides).
"""
from __future__ import annotations

import math

TITLE = "Under the hood"
INTRO = ("Three things behind every pass that no step shows: the number training makes small, how the model "
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
LOSS_AXIS_TOKENS = "the token predicted"  # the loss chart's x axis when its ticks name the tokens
LOSS_AXIS_PLACES = "token in the text (its place, from 1)"  # … when the text is too long to name them
NO_RECORD = "—"  # the loss table's "recorded by the step" cell for a prompt token: no step recorded its −log p
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


def prompt_fills(read: int) -> str:
    """Why no generated token is scored although some were generated: the prompt alone fills the ``read`` tokens."""
    return f"The prompt fills the {read:,} tokens one pass reads here, so no generated token is scored."


def parts_sentence(prompt_loss: float, generated_loss: float, n_generated: int, forced: int = 0, below: int = 0,
                   filled: int = 0) -> str:
    """The prompt's terms against those of the tokens added after it (each a mean, nats); ``forced`` and ``below``:
    how many of those were forced, and sampled below the model's top token (from their records); ``filled``: the
    tokens one pass read when the prompt alone filled them (0: it did not)."""
    if n_generated == 0 or math.isnan(generated_loss):
        return prompt_fills(filled) if filled else ("Nothing generated yet: every term is a prompt token. Generate a "
                                                    "few tokens and compute again.")
    if math.isnan(prompt_loss):
        return f"The prompt is one token, so every term is an added token's: mean {generated_loss:.3f} nats."
    odd = " and ".join(part for part in (f"{forced:,} forced" if forced else "",
                                         f"{below:,} sampled below the model's top token" if below else "") if part)
    top = n_generated - forced - below
    if generated_loss < prompt_loss and 2 * top > n_generated:
        share = f"All {top:,}" if top == n_generated else f"{top:,} of the {n_generated:,}"
        why = (f" {share} were the model's own top token{f' ({odd})' if odd else ''}: text the model picks itself "
               "tends to surprise it less than text it was given.")
    elif generated_loss < prompt_loss:
        share = "None" if top == 0 else f"Only {top:,} of the {n_generated:,}"
        why = (f" {share} were the model's own top token ({odd}): the added text was simply easier for the model "
               "to predict than the prompt.")
    elif generated_loss == prompt_loss:
        why = ""
    elif odd:
        why = (f" Here the added tokens surprise the model more than the prompt did: {odd}, which adds surprise, "
               "and a prompt it predicts easily (a list, a well-known passage) scores low.")
    else:
        why = (f" Each was the model's own top token, yet their geometric-mean probability is only "
               f"e^(−{generated_loss:.3f}) = {math.exp(-generated_loss):.3f}: the model hesitated at those steps, and "
               "a prompt it predicts easily (a list, a well-known passage) scores low.")
    than = ("lower than" if generated_loss < prompt_loss else
            "higher than" if generated_loss > prompt_loss else "the same as")
    return (f"The {n_generated:,} tokens added after the prompt have a mean loss of **{generated_loss:.3f} nats**, "
            f"{than} the prompt's **{prompt_loss:.3f}**.{why}")


def records_sentence(gap: float, compared: int, shared: int, filled: int = 0) -> str:
    """The one-pass loss of each generated token against −log p the step recorded while generating; ``shared``: how
    many of those steps chose from logits of a pass shared with other tabs' steps (``shared_pass_steps``).

    The result is stamped with the text, so the tokens are the ones the steps chose: a gap is arithmetic. ``filled``:
    the tokens one pass read when the prompt alone filled them (0: it did not)."""
    if compared == 0:
        return prompt_fills(filled) if filled else "No generated token to compare with the steps yet."
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
    "2022). Rotary embeddings put the distance between two tokens into every score directly: this model, like "
    "Llama and most recent models, **rotates** each query and key. A head's d numbers are taken in pairs, and pair "
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


def rope_sentence(base: float, head_dim: int, rope_type: str, of_head: int | None = None) -> str:
    """``head_dim``: the dimensions rotated (d); ``of_head``: the head's size, when only part turns (GPT-NeoX)."""
    kind = "" if rope_type == "default" else (f" (its `rope_type` is {rope_type}: the frequencies are rescaled, "
                                              "so the plain formula is an approximation here)")
    if of_head is not None and of_head != head_dim:
        return (f"This model's config: `rope_theta` = {base:,.0f}, and only the first d = {head_dim} of each head's "
                f"{of_head} dimensions are rotated (the rest carry no position), so {head_dim // 2} pairs per "
                f"head{kind}.")
    return (f"This model's config: `rope_theta` = {base:,.0f}, head dimension d = {head_dim}, so "
            f"{head_dim // 2} pairs per head{kind}.")


def positions_sentence(prompt_len: int, total: int) -> str:
    nxt = total
    return (f"The prefill fed the {prompt_len:,} prompt tokens at positions 0 … {prompt_len - 1:,} in one pass. Each "
            f"decode step feeds one token at the position equal to the number of tokens before it: the next step, "
            f"with {total:,} tokens before it, uses position **{nxt:,}**.")


def angles_sentence(position: int, first: float, last: float, pairs: int) -> str:
    turns = first / (2 * math.pi)
    return (f"At position {position:,}, pair 0 has turned by {first:,.2f} rad ({turns:,.2f} full turns) and pair "
            f"{pairs - 1} by {last:.2e} rad. The fast pairs tell neighbours apart; the slow ones still change "
            "over thousands of positions.")


def key_sentence(gap: float, gap_unrotated: float, gap_other: float, position: int, layer: int,
                 projection: str = "k_proj(norm(h))", rotated: int | None = None, head_dim: int | None = None) -> str:
    """``rotated`` of ``head_dim`` dimensions turn (fewer in GPT-NeoX); ``projection`` names the recomputed key."""
    if gap < AGREE:
        same = (f"equals the cache entry to **{gap:.1e}**: the cache stores keys already rotated by their own "
                "position, so a key never needs recomputing as the text grows.")
    else:
        same = f"differs from the cache entry by **{gap:.1e}**, more than float rounding: not the key it holds."
    turned = "rotated" if rotated in (None, head_dim) else f"with its first {rotated} of {head_dim} dimensions turned"
    return (f"Layer {layer}, position {position:,}: {projection} {turned} by θ at {position:,} {same} Before the "
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
    """``lengths``: the real tokens cached per row, the text's last token not among them (it is the one fed), so
    one fewer than the text's own count in the positions table."""
    short = lengths[0]
    pads = width - short
    top = "and its top token changes" if changed else "though its top token happens to stay"
    own = "the same as alone" if delta_own < AGREE * 10 else "close to alone"
    return (f"This check caches your text without its last token, then feeds that token in one padded pass beside a "
            f"longer text. Your row has {short:,} real tokens cached, so it gets {pads:,} pad columns on the left. The "
            f"batcher feeds your last token at position **{short:,}** (its row's count of real tokens cached): {own} "
            f"(max |Δ| {delta_own:.1e}). Counted by columns it would sit at {width:,}, {pads:,} positions too far: "
            f"max |Δ| **{delta_column:.2f}**, {top}.")


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
RECOMPUTED = "recomputed on its last {n:,} tokens read as a text of their own"  # a step past what one pass reads


def step_label(has_records: bool, index: int, cut_to: int = 0) -> str:
    """Which step section 3 measured; ``cut_to``: the tokens it was recomputed on when its text is longer than one
    pass reads (0: not cut, so it is the step itself)."""
    which = f"step {index}" if has_records else "the next step (nothing generated yet)"
    if cut_to:
        return f"{which}, {RECOMPUTED.format(n=cut_to)}"
    return f"{which} (the one that chose its token)" if has_records else which


def batch_sentence(which: str, max_delta: float, gap: float, rows: list[int]) -> str:
    sizes = ", ".join(str(r) for r in rows)
    zero = " (bit for bit the same)" if max_delta == 0 else ""
    return (f"For {which}: computed alone and as one row of {sizes}-row passes, the logits differ by at most "
            f"**{max_delta:.1e}**{zero}. The top two logits are **{gap:.3g}** apart.")


def flip_sentence(gap: float, max_delta: float, flipped: list[int] = ()) -> str:
    """Did a shared pass measured here change the greedy token (``flipped``: the sizes, in rows, whose top token
    differs from the solo pass's), and could a difference this size swap the top two (a gap at most twice it)?"""
    need = 2 * max_delta
    if flipped:
        rows = ", ".join(str(r) for r in flipped)
        return (f"The {rows}-row pass{'es' if len(flipped) > 1 else ''} picked a top token other than the solo "
                f"pass's (gap {gap:.2e}, difference up to {max_delta:.2e}): which batch this step lands in changes "
                "its greedy token.")
    if max_delta == 0:
        return ("The shared passes measured here gave exactly the solo numbers, so none of them changed this "
                "choice.")
    if gap <= need:
        return (f"None of the shared passes measured here changed the greedy token, but the gap ({gap:.2e}) is "
                f"within twice the difference ({need:.2e}): other companions that moved each of the two by as much, "
                "in opposite directions, could swap them.")
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
NEED_STEP = "press Next token first: the question compares the tokens added after the prompt with the prompt."
ONE_TOKEN_PROMPT = "the prompt is one token, so it has no term of its own to compare."
PROMPT_FILLS_PASS = "the prompt fills the {n:,} tokens one pass reads here, so no generated token is scored."
Q_LOSS_PARTS = ("In {part}, which tokens have the higher mean loss (−log p): the prompt's {prompt:,} scored tokens "
                "(all but its first) or the {generated:,} added after it (generated or forced)?",
                ("the prompt's", "the added ones", "about the same (within 10%)"),
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
                 "tokens, and shifting everything keeps every distance, so in exact arithmetic nothing would move. "
                 "What moves is rounding: the shifted angles have other sines and cosines, and the model computes in "
                 "{dtype}, which keeps {bits} significant bits.")
Q_BATCH_DIFF = ("{which} computed alone, then as one row of a shared pass with other texts: how large is the "
                "largest difference between the two sets of logits?",
                ("exactly 0", "above 0 but below 0.001", "0.001 or more"),
                "Computed now: at most **{delta:.1e}** over {rows} pass sizes. {reading}")
Q_FLIP = ("{which} Could one of the shared passes this page measures ({sizes} rows, the app's example texts as the "
          "other tabs) change its greedy token?", ("yes", "no"),
          "{sentence}")
DIFF_ZERO = "The shared passes happened to add in the same order as the solo one."
DIFF_SMALL = "Float rounding: the same sums, added in another order."
DIFF_FLOAT32 = ("In float32 that is more than the shared passes measured on the embedded model gave (about 1e-4 at "
                "most, on a CPU: `python -m bench.batch_exactness`): worth a second look.")


def diff_large(dtype: str, bits: int, top_logit: float, spacing: float, delta: float) -> str:
    """The reading of a solo-vs-shared difference of 0.001 or more: rounding at 16 bits, unusual at 32."""
    if bits >= 24:
        return DIFF_FLOAT32
    return (f"In {dtype}, which keeps {bits} significant bits, neighbouring numbers near logits this size (the "
            f"top one is {top_logit:.1f}) are {spacing:.3g} apart, so the difference is {delta / spacing:,.1f} of "
            "those steps: the same sums added in another order round to other numbers at this precision.")


def step_question(has_records: bool, cut_to: int, gap: float) -> str:
    """The flip question's opening: the recorded gap, unless the step is recomputed on a cut text (the recorded gap
    is then another step's) or nothing is generated."""
    if not has_records or math.isnan(gap):
        recomputed = f", {RECOMPUTED.format(n=cut_to)}" if cut_to else ""
        return f"Nothing is generated yet, so this is about the next step{recomputed}."
    if cut_to:
        return f"Your last step, {RECOMPUTED.format(n=cut_to)} (as many as one pass reads here)."
    return f"Your last step's top two logits are {gap:.3g} apart."


def flip_answer(gap: float, cut_to: int, sentence: str) -> str:
    """The flip question's answer: the gap computed now (the one a flip turns on), then the reading."""
    where = f" on its last {cut_to:,} tokens, read as a text of their own" if cut_to else ""
    return f"Computed now{where}: its top two logits are **{gap:.3g}** apart. {sentence}"


def cut_note(read: int, total: int) -> str:
    """Section 2's caption past the most one pass reads: which tokens, at which positions ("" when not cut)."""
    return "" if read >= total else (f"On the last {read:,} tokens, read as a text of their own (positions 0 … "
                                     f"{read - 1:,}): one pass reads at most {read:,} here.")


def text_part(read: int, total: int, end: str) -> str:
    """What a question's pass reads: the whole text, or (past the most one pass reads) its ``end`` ("first" or
    "last") ``read`` tokens."""
    return "this text" if read >= total else f"this text's {end} {read:,} tokens (as many as one pass reads here)"


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
