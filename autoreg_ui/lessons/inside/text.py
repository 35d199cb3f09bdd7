"""What the "Inside generation" page says: the lesson's prose, and its sentences with the measured numbers.

Pure functions and constants (no Streamlit): the page decides where each text goes.
"""
from __future__ import annotations

from autoreg_core.engine.tokens import single_token_view
from autoreg_core.experiments.logit_lens import LensReading
from autoreg_core.experiments.prefill_decode import PrefillPoint
from autoreg_core.experiments.teacher_forcing import MAX_TOKENS
from autoreg_ui.format import ratio
from autoreg_ui.glossary_text import TTFT_MEANS

WORKED_PROMPT, WORKED_NEW = 50, 100  # the seeds' worked example

INTRO = ("Four things one decode step does not show: why training is fast and generation is not, what the "
         "layers guess before the last one, what prefill and decode cost in seconds, and what a server does "
         "when the KV cache no longer fits. Everything below is computed on the loaded model, in this tab.")

# ---------------------------------------------------------------- 1 · teacher forcing, exposure bias
TEACHER_FORCING = (
    "Once a text exists, the model can score all of it in **one** forward pass: the causal mask lets position "
    "t see only positions ≤ t, so every position predicts its next token from the *true* text before it. "
    "That is **teacher forcing**, and it is why training is parallel. Generating needs the token at t before "
    "position t + 1 can be read, so the same numbers take one pass per token. Generate a few tokens, then "
    "read the text in one pass: the log-probabilities must agree.")
CUT_SHORT = f"One pass reads at most {MAX_TOKENS} tokens here; later steps are not scored."
FORCE_SOMETHING = ("Force an unlikely token above (then generate a few more) to see the model carry on from a token it "
                   "would not have chosen: the kind of mistake exposure bias is about.")
BRANCH_CAPTIONS = ("The text from the forced token on", "What the model writes itself there (greedy)")


def force_label(rank: int) -> str:
    return f"Force the model's rank-{rank} token as the next one"


def exposure_bias(step: int) -> str:
    return (f"**A simulated mistake.** Step {step} was forced: the later steps read a prefix with a token the "
            "model would not have written, and condition on it all the same. **Exposure bias** is the gap this "
            "probes: in training every prefix is real text, so the model never practised carrying on from its own "
            "slips, which generating asks of it. The one-pass view agrees with the steps (the table): the model "
            "cannot tell its own tokens from forced ones. ▌ marks where the two texts below part.")


# ---------------------------------------------------------------- 2 · the logit lens
LOGIT_LENS = (
    "The last layer's hidden state goes through the final norm and the LM head to become logits. Send the "
    "hidden state after *any* layer through the same two modules and you read what the model would say if it "
    "stopped there. Early layers mostly echo the input token; the answer usually appears late. (transformers "
    "already norms the last entry of `hidden_states`; it goes through the LM head alone, so the last row equals "
    "the model's own logits.)")


def lens_step_label(n_steps: int) -> str:
    return f"Step to read ({n_steps + 1} = the next token, not chosen yet)"


# ---------------------------------------------------------------- 3 · prefill vs decode
TTFT_HERE = "no queue on this page, so the prefill and the choice"  # the parts the inside page measures
PREFILL_VS_DECODE = (
    f"A server is judged by **time to first token** (TTFT, {TTFT_MEANS}; here {TTFT_HERE}) and **tokens per "
    "second** after it "
    "(one decode pass per token). The prefill pushes many positions through each weight matrix at once, so one "
    "read of the weights serves every prompt token; a decode step reads every weight, and the whole cache, to "
    "produce one token. How much cheaper a prompt token is depends on what limits this machine, memory traffic "
    "or arithmetic: the sweep below measures it, and only a prompt of hundreds of tokens shows the full gap.")
SWEEP_METHOD = ("At each L: a prefill of the first L prompt tokens, and one decode step on the cache it leaves "
                "(the fastest of two runs each: other work on the machine only ever adds time).")
WORKED_TITLE = f"The worked example: a {WORKED_PROMPT}-token prompt and {WORKED_NEW} new tokens"
WORKED_COUNTING = (f"Naive: each new token re-reads everything ({WORKED_PROMPT} + {WORKED_PROMPT + 1} + … + "
                   f"{WORKED_PROMPT + WORKED_NEW - 1} positions). Cached: the prompt once, then one position per "
                   f"step; the {WORKED_NEW}th token is chosen but never fed back, so the cache ends at "
                   f"{WORKED_PROMPT + WORKED_NEW - 1} positions. (The Attention page's cache holds "
                   f"{WORKED_PROMPT + WORKED_NEW}: this app feeds every chosen token in at once, so the next "
                   "distribution is ready.)")
WORKED_SPINNER = f"{WORKED_PROMPT}-token prefill, then {WORKED_NEW - 1} decode steps…"


def phases_spinner(prompt_tokens: int, new_tokens: int) -> str:
    return f"Prefill of {prompt_tokens} tokens, then {new_tokens - 1} decode steps…"


def sweep_label(lengths: list[int]) -> str:
    return f"Sweep the prefill over L = {', '.join(map(str, lengths))}"


def sweep_stopped(measured: int, planned: int) -> str:
    return f"Stopped: {measured} of {planned} lengths measured."


def sweep_sentence(point: PrefillPoint) -> str:
    return (f"At L = {point.length}, one decode step costs as much as **{ratio(point.decode_over_prefill)}** "
            f"prompt tokens inside the prefill ({point.decode_ms:.1f} ms vs {point.prefill_ms_per_token:.2f} ms).")


# ---------------------------------------------------------------- 4 · when the cache runs out
CACHE_RUNS_OUT = (
    "The cache grows by one position per token per request; on a busy server it, not the weights, fills the "
    "memory first. A server running a full-attention model then **queues** new requests or **preempts** one "
    "(drops its cache and recomputes it later, or swaps it to CPU memory); it does not drop positions, which "
    "would change the answer. **Paging**, as in vLLM's PagedAttention, stores the cache in fixed-size blocks "
    "taken as a request grows, so no request reserves room for its maximum length, and requests with a common "
    "prefix share its blocks; it packs more caches in, it does not shrink one. A **sliding window** (keep only "
    "the last W positions) is for models trained with one. Cutting a full-attention model's cache that way "
    "drops the first tokens too, which hurts most (attention sinks: many heads put much of their weight on the "
    "first token): StreamingLLM keeps those first tokens beside the window. llama.cpp's context shift (off by "
    "default in its server since August 2025) follows another rule: when the context is full it keeps the first "
    "`--keep` tokens, a setting meant for a system prompt (0 by default, plus the BOS token when prompts begin "
    "with one), and drops, by default, the older half of the rest at once. Below, what happens to this model, "
    "trained with full attention, when its cache is cut anyway: the same greedy generation twice, with the "
    "full cache and with transformers' `DynamicSlidingWindowLayer` keeping W − 1 positions, so each new token "
    "makes W and sees itself and the last W − 1. The prompt itself is still read with full attention in the "
    "prefill; the window bites from the first decode step on.")
CACHE_RUNS_OUT_INTRO = CACHE_RUNS_OUT[:CACHE_RUNS_OUT.index(" Below, what happens to this model")]


def cache_runs_out(windows: list[int | None], family: str) -> str:
    """Section 4's opening for the loaded model: ``windows`` is each layer's own sliding window (None: the layer
    sees every position), as transformers builds its cache from the config."""
    own = [w for w in windows if w is not None]
    if not own:
        return CACHE_RUNS_OUT
    rest = "changes nothing" if len(own) == len(windows) else "changes only the other layers"
    attend, their = ("attend", "their") if len(own) > 1 else ("attends", "its")
    return (f"{CACHE_RUNS_OUT_INTRO} This {family} model uses one, as its config says: {len(own)} of its "
            f"{len(windows)} layers {attend} over the last {max(own)} positions only, and {their} cache keeps "
            f"{max(own) - 1} (the next token's own key completes the window), so it stops growing there; Undo "
            "past that point rebuilds the cache from the text, since the dropped positions are gone. Below, the "
            "same greedy generation twice: with the model's own cache, and with every layer's cache cut to W − 1 "
            "positions by transformers' `DynamicSlidingWindowLayer`. The model's own mask still limits its "
            f"sliding layers to {max(own)} positions, so a W of {max(own)} or more {rest}.")


def window_captions(width: int, own_window: int | None = None) -> tuple[str, str]:
    """``own_window``: the model's own sliding window, when it has one (its own cache is then not a full one)."""
    first = "Full cache" if own_window is None else f"The model's own cache (window {own_window})"
    return f"{first} (▌ marks where the texts part)", f"Sliding window, W = {width}"


def lens_summary(tokenizer, reading: LensReading) -> str:
    """One sentence: when the eventual token first tops the guess, and from where it stays on top."""
    label = single_token_view(tokenizer, reading.target_id).label
    layers = reading.depth - 1
    if reading.first_top is None:
        return (f"“{label}” is never the top guess of any layer "
                f"(its rank at the last layer: {reading.target_ranks[-1]}).")
    where = "in the embedding" if reading.first_top == 0 else f"after layer {reading.first_top}"
    if reading.settles_at is None:
        return (f"“{label}” is first the top guess {where}, but not after the last layer (its rank there: "
                f"{reading.target_ranks[-1]}).")
    return (f"“{label}” is first the top guess {where} and stays on top from layer {reading.settles_at} of "
            f"{layers} on (lens vs the model's own logits at the last layer: {reading.last_gap:.1e} apart).")


# ---------------------------------------------------------------- 5 · a toy model
TOY = ("Here the \"model\" is a table: four tokens, and for each previous token a row of four scores (logits) for the "
       "next one. The loop around it is the app's own code, the same that steps the real model: scores → the "
       "sampling processors → softmax → pick → append → repeat, until `<eos>` or the step limit. Small enough to "
       "check every number by hand: with temperature T, p = exp(score / T) / Σ exp(score / T).")
TOY_TABLE_CAPTION = ("The score table: row = the previous token, column = the next token's logit. This toy reads only "
                     "the last token; a transformer reads all of them, which is what attention adds.")
TOY_START, TOY_TEMPERATURE, TOY_SEED = "Start from", "Temperature (0 = greedy)", "Seed"


def toy_summary(words: list[str], ended: bool, steps: int) -> str:
    end = "it picked `<eos>`, so the loop stopped" if ended else f"it reached the limit of {steps} steps"
    return f"Generated: **{' '.join(words)}** — {len(words)} passes of the loop; {end}."


# ---------------------------------------------------------------- 6 · logits = W·h + b
UNEMBED = ("After the last layer and the final norm, the model holds one vector h for the last position. The LM head "
           "turns it into logits with one matrix product: logit_t = W_t · h + b_t, where W_t is token t's row. Each "
           "row works as a **template**: the dot product is large when h points the way the row points. Writing it "
           "as |W_t| · |h| · cos θ splits a template's length from how well h matches it.")
UNEMBED_DERIVATION = "The formula: a dot product, split into lengths and an angle"
WORKED_DERIVATION = "How the positions are counted"
UNEMBED_LATEX = r"\text{logit}_t = W_t \cdot h + b_t = \lVert W_t \rVert\,\lVert h \rVert \cos\theta_t + b_t"


def unembed_sentence(u, text_tokens: int) -> str:
    bias = "It has a bias b." if u.has_bias else "This model's head has no bias, so b = 0."
    tied = (" Its W is the token embedding matrix itself (tied weights): the same rows that turn a token into a "
            "vector at the input score it at the output.") if u.tied else ""
    return (f"Read now over the session's {text_tokens} tokens: h has {u.hidden_size} numbers "
            f"(|h| = {u.hidden_norm:.2f}); W has {u.vocab:,} rows. {bias}{tied} W·h + b rebuilt from those tensors "
            f"differs from the model's own logits by at most **{u.largest_gap:.2g}** over the whole vocabulary.")


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
NOTHING_TO_SCORE = "press Next token a few times first: there is nothing generated to score yet."
PROMPT_FILLS_PASS = "the prompt fills the {n:,} tokens one pass reads here, so no generated token is scored."
NOTHING_TO_LENS = "press Next token first: the lens reads the last generated step."
NO_DECODE_STEP = "press Next token a few times first: there is no decode step to compare yet."
NO_SOLO_STEP = ("every decode step of this tab so far shared its pass with other tabs' steps, so none times one step "
                "alone; press Next token when the class is quieter.")
INSIDE_PASSES = ("This text has {n:,} generated tokens. How many forward passes does teacher forcing need to score "
                 "every one of them?",
                 ("1", "{n:,}", "{n_plus:,}"),
                 "**One** pass over the text scores every position at once (ran it now{read}: {ms:.0f} ms). Its "
                 "log-probs match the stepped ones to **{gap:.1e}** nats. {why}")
INSIDE_LENS = ("At the last step, the model's own top token was “{label}”. In which part of the {layers} layers does "
               "the logit lens first rank it first?",
               ("the first third", "the middle third", "the last third", "never before the end"),
               "{sentence}")
INSIDE_PHASES = ("In this session, which took longer: the prefill over the {prompt:,}-token prompt, or one decode "
                 "step?",
                 ("the prefill", "one decode step", "about the same (within 25%)"),
                 "{timed} **{prefill:.1f} ms** for {prompt:,} tokens "
                 "({per_token:.2f} ms per token); a decode step **{decode:.1f} ms** (median of the {steps:,} this "
                 "tab ran alone{left_out}). {per_token_reading}")
PREFILL_TIMED = ("Timed in this session: the prefill took",
                 "Timed on this server: the prefill (timed when another tab first read this prompt; this tab copied "
                 "its cache) took")  # by ``PrefillRecord.copied``
PROMPT_TOKEN_CHEAPER = "One prompt token inside the prefill cost {ratio:.1f}× less than a decode step."
PROMPT_TOKEN_DEARER = "One prompt token inside the prefill cost {ratio:.1f}× more than a decode step."
THIRDS = ("the first third", "the middle third", "the last third")
LENS_EARLY = ("An easy continuation: the guess is already there in the first third of the layers (the next step "
              "may differ: early layers often just echo the input token).")
LENS_LATE = "The guess forms late: the early layers mostly carry the input token, the last ones commit to an answer."


def passes_read(read: int, total: int, scored: int) -> str:
    """Which tokens the check's one pass read: "" for the whole text, else its first ``read`` (``scored`` of them
    generated)."""
    return "" if read >= total else (f" on the first {read:,} tokens, as many as one pass reads here, so on "
                                     f"{scored:,} of the generated ones")


def passes_why(gap: float, shared: int) -> str:
    """Why the one pass and the steps differ at all: never sampling (a log-prob does not depend on how its token was
    chosen), but the arithmetic; ``shared``: steps whose logits came from a pass shared with other tabs' steps."""
    if gap == 0:
        return "Bit for bit the same here: the same model, and sampling plays no part in a token's log-prob."
    why = ("Not bit for bit: the same model computes the same formulas, but one pass over the whole text multiplies "
           "in other shapes than the prefill and the one-token steps on the cache and adds in another order, so it "
           "rounds differently")
    if shared:
        why += (f"; and {shared:,} of the steps chose from logits of a decode pass shared with other tabs' steps, "
                "padded and added in yet another order")
    return why + ". Sampling plays no part: a token's log-prob does not depend on how it was chosen."


def phases_left_out(shared: int) -> str:
    """The decode steps the median leaves out: those whose pass also carried other tabs' steps (its time is theirs
    too), as on the Attention page."""
    return "" if shared == 0 else f"; {shared:,} that shared a pass with other tabs' steps are left out"


def lens_answer(first: int | None, settles: int | None, layers: int, last_rank: int) -> str:
    """The lens question's answer. ``first``/``settles``: the entries (0 = the embedding, i = after layer i) where the
    step's top token is first ranked top and from where it stays top; ``last_rank``: its rank after the last layer."""
    if first is None:
        return (f"**Never**: the lens ranks it first at no layer, not even after the last (rank {last_rank} there). "
                "The last row is this one pass's own logits, which put another token on top: this pass and the "
                "step's own pass round differently, so the step's top two were within rounding of each other.")
    if first == layers:
        return f"**Only at the very end**: after layer {layers} of {layers}, the last one. {LENS_LATE}"
    third = lens_third(first, layers)
    at = "in the embedding, before any layer" if first == 0 else f"after layer {first} of {layers}"
    if settles is None:
        return (f"First ranked top in **{THIRDS[third]}** ({at}), but not after the last layer (rank {last_rank} "
                "there): this one pass and the step's own pass round differently, so the step's top two were within "
                "rounding of each other.")
    reading = (LENS_EARLY, "", LENS_LATE)[third]
    stays = "from the embedding on" if settles == 0 else f"from layer {settles} on"
    return f"First ranked top in **{THIRDS[third]}** ({at}), and it stays top {stays}. {reading}".rstrip()


def lens_third(first: int, layers: int) -> int:
    """0, 1, 2: the third of the layers where entry ``first`` (0 = the embedding, counted with layer 1) falls."""
    return min(2, (max(first, 1) - 1) * 3 // layers)


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "1 · Training reads the whole text at once; generation cannot": (
        "One forward pass over the whole text gives the log-prob of every token; the table sets them next to the "
        "numbers the stepping produced one by one.",
        "Force a token on the step page, come back, and see where the model's own choice differs from the text.",
        "If training can read a whole text in one pass, why can't generation?"),
    "2 · The logit lens: a guess after every layer": (
        "Each row reads the hidden state after one layer through the output matrix: the model's guess so far.",
        "Find the layer where the final token first becomes the top guess, for two different steps.",
        "What do the early layers seem to hold, if not the answer?"),
    "3 · Prefill vs decode, in the units people quote": (
        f"Time to first token runs {TTFT_MEANS}; on this page there is no queue. After that the speed is tokens "
        "per second, one decode step per token.",
        "Lengthen the prompt and see which of the two quoted figures changes.",
        "A service advertises 100 tokens per second. What did it leave out?"),
    "4 · When the cache runs out": (
        "When cache memory is full a server queues or preempts requests rather than drop positions; the window "
        "below shows what this full-attention model loses when its cache is cut anyway.",
        "Shrink the window and step: when does the text lose track of the prompt?",
        "What would you keep if you could keep only a few old tokens?"),
    "5 · The whole loop on four tokens": (
        "The scores come from a small table, but the processors, the softmax and the pick are the same code that "
        "steps the real model; each row of the trace is one pass of the loop.",
        "Set the temperature to 1 and try a few seeds: how often does the toy stop at <eos> early?",
        "What can a transformer do that this table cannot, given that both only score the next token?"),
    "6 · From the last hidden state to logits: W·h + b": (
        "Every logit is one dot product between h and a row of W; the sentence above the table says how far the "
        "rebuilt logits are from the model's own.",
        "Step once on the step page and come back: does the winning token also have the largest cos θ?",
        "Why can a token with a long row (large |W_t|) win even when h points less directly at it?"),
}

# The help of the teacher-forcing check's "Largest difference" metric
LARGEST_GAP_HELP = ("Float rounding: one pass and the steps compute the same sums, but in other shapes and another "
                    "order (a step that shared a pass with other tabs in still other shapes), so not necessarily bit "
                    "for bit.")
