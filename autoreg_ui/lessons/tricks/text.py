"""Every sentence of "More serving tricks": speculation's arithmetic, prefix caching, constrained decoding.
Sentences that carry a number are functions of the measurement or the engine's arithmetic."""
from __future__ import annotations

from autoreg_core.experiments import speculative_math as spec_math
from autoreg_core.experiments.speculative_math import Runs
from autoreg_ui.format import human_bytes, ms

TITLE = "More serving tricks"
INTRO = ("Three tricks real servers use, each measured here on the loaded model: how far speculative decoding's "
         "arithmetic predicts its speed, how a class that opens the same prompt can share one prefill, and how a "
         "grammar makes the model's answer valid by construction, provided it is complete within the token limit.")
SPEC_TITLE, PREFIX_TITLE, GRAMMAR_TITLE = ("1 · Speculation's arithmetic", "2 · Prefix caching: the class shares one "
                                           "prompt", "3 · Constrained decoding: valid by construction")

# ---------------------------------------------------------------- 1 · speculation
SPEC = ("A **draft** guesses k tokens; the model checks them in one **verify** pass and keeps the guesses up to the "
        "first it rejects, then adds one token of its own. Guesses after that first rejection are never tested. "
        "The formula takes each guess the model tests as kept with the same probability α (the **acceptance "
        "rate**), whatever happened to the guesses before it; each draft step costs c decode steps.")
SPEC_DERIVATION = "Formula: tokens per round, speed-up"
SPEC_WORKING = ("If each tested guess is kept with the same probability α, independently, a round gives on average the "
                "sum below (k + 1 tokens at most: every guess and one of the model's own); a round "
                "costs k draft steps of c decode steps each, plus the verify pass (one decode step, if reading k + 1 "
                "tokens cost no more than one).")
SPEC_LATEX = (r"E[\text{tokens per round}] = \sum_{i=0}^{k} \alpha^i = \frac{1-\alpha^{k+1}}{1-\alpha}"
              r"\qquad \text{speed-up} = \frac{E[\text{tokens per round}]}{k\,c + 1}")
WHATIF_ALPHA, WHATIF_C = "What if α =", "and c ="
WHATIF_HELP = "Move α and c to see where a longer draft stops paying; the measured drafts below use their own."
WHATIF_TITLE = f"Speed-up by draft length k<br>the star marks the best k from 1 to {spec_math.MAX_K}"
WHATIF_CURVE = "what if"  # the sliders' curve, in its own chart
WHATIF_CURVE_BESIDE = "what if (the sliders above)"  # the same curve beside the measured drafts, under the button
SPEC_CURVES_TITLE = (f"Predicted speed-up of each measured draft, k = 1 to {spec_math.MAX_K}<br>Each prompt and "
                     "draft's curve is the formula E / (k·c + 1) with the α and c measured at the k you ran, not a "
                     "run at every k. A star marks each curve's highest point in "
                     f"k = 1–{spec_math.MAX_K}: a star below the dotted 1× line means no draft length pays, and a "
                     f"star at k = {spec_math.MAX_K} may not be the top.")
BEST_K_HOVER = f"highest for k ≤ {spec_math.MAX_K}: k = "
SPEC_K, SPEC_MAX_NEW = "Draft length k", "Tokens to write"
SPEC_RUN = "Measure α and c for both drafts"
SPEC_METHOD = ("Greedy decoding on two prompts: one whose answer copies its context (prompt lookup's case) and one "
               "that does not. Drafts: prompt lookup (2-gram) and the model's own first layers (early exit). α is kept "
               "÷ tested guesses, that is kept ÷ (kept + rounds that ended in a rejection). Kept ÷ drafted, which "
               "servers such as vLLM log as the draft acceptance rate, counts the untested guesses after a rejection "
               "too, so it is never higher, and lower once a round rejects a guess before its last and some guess was "
               "kept. c is the draft's time "
               "per guess over a plain decode step's time. Both sides are timed the same way, each decode step or "
               "round with its choice of tokens and the model's prefill left out, with one exception: the early-exit "
               "draft runs its layers over the whole prompt inside round 1's drafting, so its own prefill is counted "
               "in its c and in the measured speed-up. Every number covers all rounds: the prediction adds up the "
               "formula round by round, each with its own number of guesses (fewer than k where the match prompt "
               "lookup took, the earliest, lay too near the end of the context to give k tokens, or it found none, "
               "or near the end of the run).")
SPEC_NOTHING = "Press the button to run both drafts and plain decoding; the chart above works from the sliders."


def _small(x: float) -> str:
    """Two decimals, or two significant figures below 0.1, so a draft cost of 0.004 steps does not read 0.00."""
    return f"{x:.2g}" if 0 < abs(x) < 0.1 else f"{x:.2f}"


FORMULA = "the formula (verify counted as one decode step)"  # what every best-k figure comes from


def best_k_sentence(label: str, alpha: float, c: float, k: int, speedup: float, pays: bool,
                    longest: int | None = None, next_adds: float | None = None) -> str:
    """Where a longer draft stops paying by the formula, verify as one step, for one α and c (or that no draft pays at
    all, or that even the longest draft the chart looks at, ``longest``, still pays): a prediction, for measured
    drafts too (the table beside it measures v). ``next_adds``: α^(k+1), the tokens one more guess would add
    (``BestK.next_adds``); a best k short of the longest with a speed-up above 1 implies c > 0."""
    said = f"**{label}**: with α = {alpha:.2f} and c = {_small(c)}, {FORMULA}"
    if pays and longest is not None and k >= longest:
        return (f"{said} says a longer draft still pays at k = {k}, the longest this chart looks at ({speedup:.2f}× "
                "plain decoding predicted): up to there, every guess added more tokens per step of its cost "
                "(α^(k+1) ÷ c) than the speed-up already reached.")
    if not pays:
        return (f"{said} finds no draft length that pays: the best, k = {k}, is predicted at {speedup:.2f}×, "
                + ("below" if speedup < 1.0 else "no better than")
                + " plain decoding's 1×. A cheaper draft or more kept guesses would be needed.")
    said += f" predicts k = {k} best ({speedup:.2f}× plain decoding)"
    if next_adds is None or c <= 0:
        return said + "."
    return (said + f". Guess {k + 1} would add α^{k + 1} = {_small(next_adds)} tokens for {_small(c)} of a step, "
            f"{next_adds / c:.2f} tokens per step of its cost, no more than the {speedup:.2f} tokens per step that "
            f"k = {k} already gives, so it would not raise the speed-up.")


def measured_sentence(label: str, draft: str, predicted: float, measured: float, predicted_v: float,
                      verify: float) -> str:
    """Predicted against measured speed-up, and the verify pass's cost that the simple formula leaves out."""
    closer = abs(predicted_v - measured) < abs(predicted - measured)
    dearer = verify > 1.0
    return (f"“{label}”, {draft}: the formula predicts {predicted:.2f}×, the run measured {measured:.2f}×. "
            f"A verify pass took on average {verify:.2f} decode steps' time, "
            + ("more than the one the formula assumes" if dearer else "no more than the one the formula assumes")
            + f"; counting it predicts {predicted_v:.2f}×, "
            + ("closer to the measurement." if closer else "no closer to the measurement."))


def rounds_sentence(label: str, draft: str, predicted: float, measured: float, runs: Runs) -> str:
    """Tokens per round, formula against run, and whether the run shows what the formula leaves out: kept guesses
    that come in runs (``Runs.reading``: a round's first guess against the guesses tested right after a kept one)."""
    said = (f"“{label}”, {draft}: {measured:.2f} tokens per round measured, {predicted:.2f} predicted from the "
            "measured α. ")
    first = f"{runs.first_rate:.0%} ({runs.first_kept} of {runs.first_tested})"
    later = f"{runs.later_rate:.0%} ({runs.later_kept} of {runs.later_tested})"
    reading = runs.reading
    if reading == "unknown":
        return said + ("No guess was tested right after a kept one, so this run cannot show whether kept guesses "
                       "come in runs.")
    if reading == "runs":
        return said + (f"Here kept guesses came in runs: a round's first guess was kept {first}, a guess right after "
                       f"a kept one {later}, more than three standard errors apart. The formula takes every tested "
                       "guess as kept with the same α, whatever came before.")
    if reading == "opposite":
        return said + (f"A guess right after a kept one was kept less often than a round's first guess, {later} "
                       f"against {first}, more than three standard errors apart: the opposite of runs, and not what "
                       "the formula assumes either.")
    return said + (f"A round's first guess was kept {first}, a guess right after a kept one {later}: within three "
                   "standard errors of each other, too close for this run to show that kept guesses come in runs.")


# ---------------------------------------------------------------- 2 · prefix caching
PREFIX = ("When thirty tabs open the same prompt, each would run the same prefill. This server keeps the KV cache "
          "and the next-token logits of recent whole prompts, keyed by the exact token ids, the model and its dtype, "
          "and gives each new tab a **copy** to extend. vLLM's automatic prefix caching and SGLang's RadixAttention "
          "reuse shared beginnings without copying: requests point at the same cached keys and values, matched a "
          "whole block of tokens at a time in vLLM and, by default, token by token in SGLang's radix tree. Neither "
          "keeps logits, so even a full match runs at least the last prompt token again. Memory here is bounded by "
          "an operator setting, "
          "AUTOREG_PREFIX_CACHE_MB; the least recently used prompt goes first.")
PREFIX_STATS_CAPTION = ("This server's prefix cache, for every tab since it started. A tab's prefill asks it first, "
                        "unless that prefill also records the attention weights (the attention page's view): such a "
                        "prefill runs on its own and stores nothing.")
PREFIX_TABS = "Tabs opening the prompt"
PREFIX_RUN = "Open your prompt in that many tabs, with and without the cache"
PREFIX_METHOD = ("Each tab is a fresh session on your prompt (the step page's, or a default one before you start). "
                 "Without the cache every tab runs its own prefill; with it the first tab's prefill is stored and "
                 "every other tab starts from a copy, if the prefill fits the store's budget (if not, every tab runs "
                 "its own prefill). The demonstration uses a cache of "
                 "its own, so this server's numbers above stay the class's.")
PREFIX_DEFAULT = "The history of the printing press begins in the fifteenth century, when Johannes Gutenberg"
DISABLED = "off (budget 0)"


def prefix_stat_labels() -> tuple[str, str, str, str]:
    return ("cache hits", "misses (fresh prefills)", "prefill time saved", "memory held")


def prefix_stats(hits: int, misses: int, saved_ms: float, held: int) -> tuple[str, ...]:
    return f"{hits:,}", f"{misses:,}", ms(saved_ms), human_bytes(held)


def prefix_budget(budget: int, entries: int) -> str:
    """Under the counters: the operator's budget and how many prompts are kept."""
    if budget <= 0:
        return f"Budget: {DISABLED}; nothing is kept."
    return (f"Budget: {human_bytes(budget)} (AUTOREG_PREFIX_CACHE_MB) · {entries} prompt{'s' * (entries != 1)} "
            "kept now.")


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def prefix_sentence(tabs: int, plain_ms: float, cached_ms: float, identical: bool, held: int, hits: int,
                    misses: int, budget: int) -> str:
    """The demonstration's result: time for every tab's prefill both ways, what its store did (``hits`` copies handed
    out, ``misses`` prefills run, ``held`` bytes kept: 0 when the prefill was larger than the ``budget``), and
    whether every tab's logits equal a fresh prefill's."""
    faster = cached_ms < plain_ms
    if identical:
        same = "every tab's logits are bit for bit a fresh prefill's" + (
            " (a hit's cache is a copy of the stored one)" if hits else "")
    else:
        same = "some tab's logits differ from the first fresh prefill's" + (
            ": either two fresh prefills disagree, or a copy does" if hits else ", though none came from the store")
    kept = (f"The stored prefill holds {human_bytes(held)}" if held else
            f"The store kept nothing: this prompt's prefill is larger than its budget of {human_bytes(budget)}")
    return (f"{tabs} tabs: {ms(plain_ms)} of prefills without the cache, {ms(cached_ms)} with it "
            f"({_count(misses, 'prefill', 'prefills')} and {_count(hits, 'copy', 'copies')} from the store), "
            + (f"{plain_ms / max(cached_ms, 1e-9):.1f}× faster" if faster else "no faster here")
            + f". {kept}; {same}.")


# ---------------------------------------------------------------- 3 · constrained decoding
GRAMMAR = ("One more stage in the sampling pipeline, before the others: every token the grammar cannot accept next "
           "gets a logit of −∞. The model still chooses, but only among text that can be completed into a valid "
           "answer. The mask comes from **llguidance**, which walks the grammar over this tokenizer's own "
           "vocabulary. Once the text can end, the end-of-text token is allowed too. Where the grammar cannot go on "
           "(the default choices once one is written, the default JSON object once closed, the last digit of "
           "555-0123) it is the only token left; a grammar such as \\d+ keeps allowing more digits beside it. The "
           "answer is valid only if the grammar is complete before the token limit cuts it off.")
GRAMMAR_KIND, GRAMMAR_SOURCE, GRAMMAR_PROMPT, GRAMMAR_MAX_NEW = ("Grammar", "The grammar", "Prompt (chat mode)",
                                                                 "Tokens at most")
GRAMMAR_RUN = "Generate with and without the grammar (greedy)"
GRAMMAR_CAPTIONS = ("With the grammar", "The same prompt, no grammar")
GRAMMAR_SOURCE_HELP = {"JSON schema": "A JSON schema, as JSON.", "regex": "A regular expression the whole answer "
                       "must match.", "choice": "One choice per line; the answer is exactly one of them."}
STEPS_CAPTION = ("Each step: how many of the vocabulary's tokens the grammar allowed, and the share of the model's "
                 "probability it removed (what the model wanted that would have broken the grammar).")


def validity(kind: str, valid: bool, reason: str) -> str:
    """Whether a text parses under its grammar, as checked by a parser that is not the grammar's."""
    return (f"**Valid** under the {kind}: {reason}." if valid else f"**Not valid** under the {kind}: {reason}.")


def grammar_sentence(steps: int, mean_allowed: float, vocab: int, most_removed: float, at_step: int) -> str:
    return (f"Over {steps} steps the grammar allowed on average {mean_allowed:,.0f} of the {vocab:,} tokens. "
            + (f"It removed the most probability at step {at_step}: {most_removed:.1%} of what the model wanted "
               "there would have broken the grammar." if most_removed > 0 else
               "It never removed any probability: the model's own choices already fit the grammar."))


# ---------------------------------------------------------------- the boxes
GUIDES: dict[str, tuple[str, str, str]] = {
    SPEC_TITLE: (
        "The curve rises while the next guess adds more tokens per step of its cost (α^(k+1) ÷ c) than the "
        "speed-up already reached, then falls (or, with a cheap draft kept often, still rises at k = "
        f"{spec_math.MAX_K}): its top is the best draft length for that α and c.",
        "Set α near a measured one and make c larger: watch the best k move left and the best speed-up fall to "
        "plain decoding's 1× or below by c = 1.",
        "Which costs of a round does E / (k·c + 1) leave out on a CPU, and which column of the table measures one "
        "of them?"),
    PREFIX_TITLE: (
        "A hit copies keys and values instead of computing them: the copy's cost is bytes moved, the prefill's is "
        "arithmetic over every prompt token.",
        "Open the prompt in 30 tabs, then again in 2: when does the copy stop being worth it?",
        "Why must each tab get its own copy, and what would go wrong if two tabs extended the stored cache?"),
    GRAMMAR_TITLE: (
        "The allowed count falls to a handful where the grammar leaves little choice, and the removed mass shows "
        "where the model wanted to leave it.",
        "Switch to the list of choices and run it: count the steps the answer takes, and read how many tokens "
        "the grammar allows at the last one.",
        "An answer complete within the token limit is valid by construction, but is it right? What can a grammar "
        "not check?"),
}

# ---------------------------------------------------------------- predict, then check
SPEC_TOKENS = ("If each tested guess is kept with probability α = {alpha}, how many tokens does a round with k = {k} "
               "give on average?",
               ("about 1", "about 2", "about 3", "all {k_plus}"),
               "**{tokens:.2f}** tokens: (1 − {alpha}^{k_plus}) / (1 − {alpha}). A round never gives fewer than 1 "
               "(the model's own token) nor more than {k_plus} (every guess and the bonus).")
SPEC_BEST = ("A draft costs c = {c} of a decode step and α = {alpha}. Which draft length k gives the most speed-up?",
             ("k = 1", "k = 2 to 4", "k = 5 to 8", "longer than 8"),
             "**k = {k}**, {speedup:.2f}× plain decoding. Guess {k_next} would add {alpha}^{k_next} = {adds:.2f} "
             "tokens for {c} of a step, {per_step:.2f} tokens per step of its cost: {contrast}below the "
             "{speedup:.2f} tokens per step that k = {k} already gives, so the speed-up falls to {after:.2f}×. A "
             "guess pays while α^(k+1) ÷ c exceeds the speed-up already reached.")
SPEC_BEST_MORE = "more tokens than the steps it costs, yet "  # when α^(k+1) > c: the old rule would have said it pays
PREFIX_SAME = ("Does a tab that starts from another tab's stored prefill get exactly the logits a fresh prefill of "
               "your prompt gives?",
               ("yes, bit for bit", "nearly: within about 1e-4", "no, they differ visibly"),
               "Largest difference over all {vocab:,} logits: **{diff:g}**. {reading}")
PREFIX_SAME_YES = "The stored logits are the very numbers the first prefill computed, and the cache is copied exactly."
PREFIX_SAME_NO = "The numbers differ: a hit would not be the same as a fresh prefill."
PREFIX_BYTES = ("How much memory does the stored prefill of your {n}-token prompt hold (its keys, values and logits)?",
                ("under 1 MiB", "1 to 10 MiB", "more than 10 MiB"),
                "**{held}**: 2 (K and V) × {layers} layers × {kv} KV heads × {dim} dimensions × {n} positions × "
                "{size} bytes, plus {vocab:,} logits × 4 bytes (float32).")
GRAMMAR_ALLOWED = ("At the first step of the list of choices {choices}, how many of the {vocab:,} tokens may the "
                   "model write?",
                   ("1 to 3", "4 to 30", "31 to 1,000", "more than 1,000"),
                   "**{allowed}** tokens: the beginnings of the three words in every way the tokenizer can write them.")
GRAMMAR_MASS = ("Asked for a phone number, with the regex {regex}: how much of the model's probability does the mask "
                "remove at the first step?",
                ("none", "under 10%", "10% to 50%", "more than 50%"),
                "**{removed:.1%}**: the model's favourite first token was {favourite}, which the regex "
                "{allows}.")
