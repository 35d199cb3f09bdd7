"""What the step page says around its controls: the loop in one paragraph, and the ideas it makes visible."""
from __future__ import annotations

LOOP = (
    "A language model writes by repeating one small loop: read everything so far, turn the last "
    "position's hidden state into **logits** (one score per vocabulary token), make them "
    "probabilities with a softmax, pick one token, append it, go again. The first pass over the "
    "prompt is the **prefill**; every later pass feeds only the newest token and reuses the keys and "
    "values stored in the **KV cache** — one **decode step**."
)
CHAIN_RULE_LABEL = "The chain rule as a formula: how the steps' probabilities multiply"
CHAIN_RULE = r"P(x_1,\dots,x_T \mid \text{prompt}) = \prod_{t=1}^{T} P(x_t \mid \text{prompt}, x_{<t})"
BATCHED_GAP = ("batched logits differ from solo ones by about 1e-4 at most in the runs measured on the embedded "
               "model, on a CPU in float32 (`python -m bench.batch_exactness`)")
NEAR_TIE = ("rounding tips a near-tie: when other tabs step at the same moment, this server runs their steps and "
            f"yours as one batch, and {BATCHED_GAP}")


SAME_RUN = ("as long as every step of this tab used the sidebar's current settings, the seed is the one this tab "
            "fixed at its first step, and no token was forced (the code uses the settings shown now)")


def same_tokens(device: str, code: str, checked: str, near_tie: str = NEAR_TIE) -> str:
    """Whether ``code`` (run by the learner) gives this page's tokens, for a server whose model runs on ``device``
    (``torch.device.type``). The app draws on the CPU; the snippets put the ids on the model's device, so
    ``generate`` and the hand-written loop draw there: with the same seed they give the app's tokens on a CPU, and
    elsewhere at best when greedy. Either way only for the settings and seed shown now (``SAME_RUN``)."""
    if device == "cpu":
        return (f"Run on a CPU, as this server runs it, {code} gives the tokens you get here by clicking **Next "
                f"token** ({checked}) {SAME_RUN}, unless {near_tie}. On a GPU, {code} draws its random numbers "
                "from the GPU's own generator, which the same seed starts on another sequence than the CPU's, so "
                "there only greedy runs (temperature 0) can give these tokens, and the bfloat16 or float16 that "
                "`load_model` picks on a GPU tips near-ties more easily.")
    return (f"This server runs the model on {device} but draws each token on the CPU, while {code}, run on {device}, "
            "draws from that device's own generator, which the same seed starts on another sequence: only greedy "
            "runs (temperature 0), on this model, device and dtype, give the tokens you get here by clicking "
            f"**Next token** (the tests check this on a CPU only), {SAME_RUN}, unless {near_tie}.")


GENERATE_ARGUMENTS = (
    "`use_cache=True` is the KV cache; `pad_token_id` only matters when several prompts of different lengths run as "
    "one batch. `max_new_tokens` counts only the tokens generated; the older `max_length` counts the prompt too, so a "
    "long prompt leaves it less room. The sidebar's stop sequences are generate's `stop_strings` (it needs the "
    "tokenizer to find them).")


def generate_call(device: str) -> str:
    """The note above the ``model.generate`` snippet, for a model on ``device``."""
    return ("Every sidebar setting maps onto an argument of transformers' `generate`. "
            f"{same_tokens(device, 'this code', 'a test checks it')} {GENERATE_ARGUMENTS}")


def loop_code(device: str) -> str:
    """The note above the hand-written loop, for a model on ``device``."""
    return ("What `generate` does inside, written out: one prefill over the prompt, then one decode step per token, "
            "each feeding only the newest token and reusing the `DynamicCache`. "
            + same_tokens(device, "this loop", "a test runs this very text", "rounding tips a near-tie as above")
            + " Stop sequences are left out to keep it short.")


# The step metrics' help texts (the page's metric row).
LOGPROB_HELP = "Σ log p(token | everything before it): the chain rule, in nats, under the model's raw softmax."
PERPLEXITY_HELP = ("exp(−mean log-prob of the chosen tokens) under the model's raw softmax (not the filtered one): how "
                   "surprised the model was by the tokens it got, as a number of equally likely choices. For greedy "
                   "text it understates the model's uncertainty, since it always took the likeliest token; the "
                   "entropy measures the hesitation.")
ENTROPY_HELP = ("How spread out the model's raw softmax was at the last step (before the filters): its hesitation, "
                "in bits.")
LAST_STEP_HELP = ("Choosing the token plus one forward pass of one token on the KV cache (if other tabs stepped at the "
                  "same moment, that pass carried their rows too).")


def around_the_loop(n_tokens: int, dtype: str, last_ms: float | None = None) -> str:
    """The ideas one can see while stepping, with this session's token count, the model's dtype and the
    last step's measured time."""
    here = (f"Here the last step took {last_ms:.0f} ms, about {1000 / last_ms:.0f} tokens per second."
            if last_ms else "Step once to see this machine's figure.")
    return f"""
- **No going back.** Each token is final once appended; the model never revises earlier text. Force
  a token and watch later steps condition on that choice. This *simulates* a mistake of the kind
  behind **exposure bias**: in training the model only ever read correct text (**teacher forcing**),
  so it never learned to recover from its own slips, while when generating it reads its own choices.
- **One token at a time, no search.** The model commits to a single token per step and never
  revises it. That does not mean it has no idea of what comes later: probing studies find
  information about upcoming tokens in the hidden states. What it lacks is a step that looks ahead
  and changes its mind (beam search, in the sampling lab, adds one from outside).
- **A sequential bottleneck.** Step *t + 1* needs the token chosen at step *t*, so the steps of one
  sequence cannot run in parallel: {n_tokens} tokens took one prefill pass plus {n_tokens} decode
  passes (the last one already prepared the next token's distribution). More GPUs can shorten each
  step (tensor parallelism streams the weights from several GPUs at once) and serve more users
  (batching), but no hardware removes the number of sequential steps.
- **Streaming.** Because tokens arrive one by one, apps show them as they come (as the strip above does).
- **How fast is fast?** {here} Independent measurements of hosted chat models
  (Artificial Analysis's public leaderboard, 2024–2025) mostly fall between about 50 and 200 output tokens per
  second for one request, and specialised chips (Groq, Cerebras) report several hundred to over a thousand. A
  person reads roughly 240 words a minute (Brysbaert, 2019, a review of 190 studies), about 5 tokens a second,
  so streaming outruns any reader; the cost that matters to a server is all the users at once.
- **Stopping.** Generation ends at the **EOS** token, at **max new tokens**, or when a **stop sequence**
  appears (set them in the sidebar); in chat mode the model's EOS is its end-of-turn marker.
- **Making it faster.** *Quantization* stores weights in fewer bits (this very model ships as a 4-bit
  GGUF file, dequantized to {dtype} when loaded); *mixed precision* runs the matrix
  products in 16-bit floats while keeping softmax, normalisation and sums (accumulation) in 32-bit;
  *speculative decoding* lets a cheap draft propose several tokens that the model checks in
  one pass; *continuous batching* lets a server add and remove requests from a running batch every
  step. The KV cache is a saving of the same kind: **Naive vs KV cache** measures it on this model.
- **Other ways to write.** Non-autoregressive and diffusion-style models predict many positions at
  once and refine them; they are faster per token but harder to keep coherent.
"""


def step_title(index: int, how: str, label: str, prob: float, prob_filtered: float, rank: int, kept: int,
               one_line: bool = False) -> str:
    """This step's chart title (``label`` already escaped for the chart) and, after ``<br>``, the sentence shown as its
    caption; ``one_line`` (a projector): the title alone, with the tokens kept. ``prob`` and ``rank`` are in the
    model's own softmax, ``prob_filtered`` after the filters (0 for a forced token the filters removed)."""
    tokens = f"{kept} token{'s' if kept != 1 else ''}"
    head = f"Step {index}: {how} “{label}”, p = {prob:.3f}"
    if one_line:
        return f"{head}, {tokens} kept"
    return (f"{head}<br>p is its probability in the model's own softmax, where it ranked {rank}; after the filters "
            f"its probability is {prob_filtered:.3f}, with {tokens} kept.")


def pass_note(forward_ms: float, rows: int) -> str:
    """How the last step's forward pass ran: alone, or shared with other tabs' steps (timed as the whole pass)."""
    if rows <= 1:
        return f"This step's forward pass: {forward_ms:.0f} ms, for this tab alone."
    others = rows - 1
    return (f"This step's forward pass: {forward_ms:.0f} ms, shared with {others} other tab{'s' if others > 1 else ''} "
            "that asked for a step at the same moment: one pass over all of them, each with its own KV cache. "
            "That is batching one step at a time (each pass gathers whichever steps are waiting), not the "
            "continuous batching of the *How servers go fast* page, where a server keeps one running batch that "
            "requests join and leave between steps.")


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
STEP_TOP = ("Before the next click: will the model's favourite next token get more than half of the probability?",
            ("yes, more than 50%", "no, 50% or less"),
            "The model's top candidate is “{label}” with **{p}** in its own softmax; the runner-up has "
            "{p2}. A confident step has one tall bar; an open one spreads the mass.")
STEP_LOGPROB = ("After the next token, will the sequence log-prob be higher or lower than now?",
                ("higher", "lower (or the same)", "it depends on the token"),
                "Lower or the same, always: each step adds log p, and a probability is at most 1, so log p ≤ 0. "
                "Now it is **{now:.2f}** nats; the best the next step can do is add log {p:.3f} = **{best:.2f}**.")
STEP_ENTROPY = ("How uncertain is the model about the next token? Guess the entropy of its own softmax at this step.",
                ("under 1 bit (nearly sure)", "1 to 4 bits", "more than 4 bits"),
                "**{bits:.2f} bits**: as uncertain as a fair pick among about **{even:,.1f}** tokens (2 to the power "
                "of the entropy). Near 0 one token takes almost all the mass; each extra bit doubles that number.")


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "This step's distribution": (
        "The pale bars are the model's own softmax; the dark ones are what is left after temperature, top-k, "
        "top-p and min-p. The outlined bar is the token that was picked.",
        "Set the temperature to 0, step, then set it to 1.5 and step again: compare how many bars stay tall.",
        "Why can a token with only 5% probability still be picked, and how often would you expect it?"),
    "Force the next token": (
        "These are the candidates for the next token before anything is drawn: the model has already done its "
        "work, only the choice is left.",
        "Click an unlikely bar to force it, then step a few times and watch the text bend around that choice.",
        "After a forced mistake, does the model ever go back and fix it? Why not?"),
    "The chain rule, running": (
        "Every bar is the log-probability of one chosen token; the line is their running sum, the log-probability "
        "of the whole continuation. It never goes up: a probability is at most 1.",
        "Force one very unlikely token and see how far the line drops at that step.",
        "Two continuations of the same length: which one did the model find more likely, and how can you tell?"),
    "History": (
        "Each row is one decode step: the token, its probability before and after the filters, its rank, the "
        "entropy of the distribution and the time the step took.",
        "Sort by entropy: are the uncertain steps the ones where the text could have gone several ways?",
        "Why does the cache length grow by exactly one per row?"),
}
