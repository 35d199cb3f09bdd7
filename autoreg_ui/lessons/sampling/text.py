"""What the sampling lab writes next to its charts: token labels, sentences with this context's numbers, tables.

Pure functions of engine results (no Streamlit). Model output inside Markdown goes through ``md``.
"""
from __future__ import annotations

import math
from collections.abc import Callable

from autoreg_core.engine import decode
from autoreg_core.engine.tokens import single_token_view, token_views
from autoreg_core.experiments.beam_search import BeamResult
from autoreg_core.experiments.continuations import ContinuationSet
from autoreg_core.experiments.sampling_lab import InverseCdfDraw, ManyDraws, StrategyRow, Sweep, shown_ids
from autoreg_ui.messages import plain

CONTEXT_SHOWN = 40  # tokens of the context shown above the charts


def context_title(n_tokens: int) -> str:
    return f"Context: {n_tokens} tokens (the logits are for the token after it)"


CONTINUING = "The sentence being continued:"
FORMULAS = "The formulas, and this context's numbers"
MORE_SETTINGS = "More settings: tokens shown, the draw's seed, the sidebar's settings"


def stopped(why: str) -> str:
    return f"The session has stopped ({why}); these are still the model's logits for the position after it."


# The lab's sliders against the sidebar's (pages/sampling.py; controller.defaults and copy_sidebar).
LAB_TEMPERATURE = "Lab temperature (0 = greedy)"
LAB_SLIDERS = ("These sliders are the lab's own: they reshape the distribution shown here and nothing else. They "
               "started at the sidebar's settings when this tab first opened the lab; Next token and Generate use "
               "the sidebar's. **Copy the sidebar's settings** makes them equal again. The repetition penalty is "
               "the sidebar's.")
def presenter_tokens(most: int) -> str:
    return f"On a projector the pipeline shows at most {most} tokens, so that their names stay readable."


LAB_SLIDERS_HELP = ("The lab's temperature, for the charts on this page only. The sidebar's temperature is the one "
                    "Next token and Generate use; the lab's started at it when this tab first opened the lab.")


def context_text(tokenizer, ids: list[int], last: int = CONTEXT_SHOWN) -> str:
    """The ``last`` tokens of the context, each decoded in context (a character split over tokens stays whole)."""
    return "".join(v.text for v in token_views(tokenizer, ids)[-last:])


def labeler(tokenizer) -> Callable[[int], str]:
    """id → the token as a chip shows it (whitespace visible, partial bytes as hex), remembered."""
    seen: dict[int, str] = {}

    def label(token_id: int) -> str:
        if int(token_id) not in seen:
            seen[int(token_id)] = single_token_view(tokenizer, int(token_id)).label
        return seen[int(token_id)]
    return label




def pipeline_messages(pipe: decode.Pipeline) -> list[tuple[str, str]]:
    """(level, text) for what the learner should know about these settings: clamping, greedy, the penalty."""
    out = [("info", note) for note in pipe.notes]
    if pipe.fallback:
        out.append(("warning", "Every token was filtered out, so the lab falls back to the single most likely token."))
    elif pipe.greedy:
        out.append(("info", "Temperature 0 is greedy decoding: the most likely token is taken, no division by T "
                            "happens and top-k, top-p and min-p change nothing."))
    if pipe.config.repetition_penalty != 1.0:
        out.append(("info", f"The sidebar's repetition penalty ({pipe.config.repetition_penalty:g}) is applied "
                            "first, as generate does."))
    return out


def temperature_text(pipe: decode.Pipeline, label: Callable[[int], str]) -> str:
    top = shown_ids(pipe, 1)[0]
    raw = float(pipe.raw_probs[top])
    if pipe.greedy:
        return ("T = 0 is **greedy**: the division would blow up, so the argmax is taken directly "
                f"(here “{plain(label(top))}”, p = {raw:.3f} at T = 1).")
    at_t = float(pipe.stage(decode.TEMPERATURE).probs[top])
    return (f"Top token “{plain(label(top))}”: p = {raw:.3f} at T = 1, **{at_t:.3f}** at "
            f"T = {pipe.config.temperature:g}. "
            "T < 1 sharpens, T > 1 flattens.")


def filters_text(pipe: decode.Pipeline) -> str:
    """The cut-offs the filters used here, then what is left."""
    parts = []
    top_p, min_p = pipe.stage(decode.TOP_P), pipe.stage(decode.MIN_P)
    if top_p is not None and top_p.active and top_p.threshold is not None:
        parts.append(f"Top-p here keeps {top_p.kept:,} tokens, holding {top_p.threshold:.3f} of the mass "
                     f"(≥ {pipe.config.top_p:g}).")
    if min_p is not None and min_p.active and min_p.threshold is not None:
        top = min_p.threshold / pipe.config.min_p
        parts.append(f"Min-p here drops tokens below {pipe.config.min_p:g} × {top:.3f} = {min_p.threshold:.4f}.")
    kept = int(pipe.kept)
    parts.append(f"**After all stages:** {kept:,} token{'s' if kept != 1 else ''} left, entropy "
                 f"{decode.entropy_bits(pipe.probs):.2f} bits "
                 f"(raw softmax: {decode.entropy_bits(pipe.raw_probs):.2f}).")
    return " ".join(parts)


RAW_PANEL_TITLE = "1. logits, zoomed axis"  # its axis spans the shown logits, not 0 up (``shown_caption`` says why)


def shown_caption(pipe: decode.Pipeline, ids: list[int], vocab_size: int) -> str:
    return (f"{len(ids)} of {vocab_size:,} tokens shown; at temperature 1 they hold "
            f"{float(pipe.raw_probs[ids].sum()):.1%} of the probability. The logits' axis is zoomed to the "
            "shown logits, their bars rising from its bottom: the softmax reads only the differences between logits. "
            "Every panel after it has the same probability axis, 0 to 1, so a flatter distribution looks flatter. "
            "Grey bars: removed by this stage "
            "(hover names it); ✕ marks a token removed by an earlier stage.")


def draw_text(draw: InverseCdfDraw, pipe: decode.Pipeline, seed: int, label: Callable[[int], str]) -> str:
    low, high = draw.interval
    return (f"u = **{draw.u:.4f}** (seed {seed}) falls in [{low:.4f}, {high:.4f}), the interval of "
            f"**“{plain(label(draw.token_id))}”**, ranked {draw.position + 1} of {int(pipe.kept):,} kept.")


def draws_text(many: ManyDraws, probs, seed: int) -> str:
    return (f"{many.n:,} draws from the filtered distribution above (torch.multinomial, seed {seed}). Largest gap "
            f"|frequency − p| over all tokens: **{many.largest_gap(probs):.4f}**. The law of large numbers says the "
            "frequencies settle on the probabilities; how fast is the binomial standard error √(p(1 − p)/N), which "
            f"shrinks like 1/√N (at most {0.5 / many.n ** 0.5:.4f} here, at p = 0.5). Whiskers: ±2 standard errors.")


def sweep_text(sweep: Sweep) -> str:
    i = sweep.at(1.0)
    return (f"softmax(z / T) with no filters, T from {sweep.temperatures[0]:g} to {sweep.temperatures[-1]:g}. "
            "At T = 1: "
            f"{sweep.entropy_bits[i]:.2f} bits, top token {sweep.top_prob[i]:.3f}, {sweep.cover[i]:,} tokens for "
            f"{sweep.mass:.0%}. At T = {sweep.temperatures[0]:g}: {sweep.cover[0]:,}; at T = "
            f"{sweep.temperatures[-1]:g}: {sweep.cover[-1]:,}.")


def uniform_bits(vocab_size: int) -> float:
    """The entropy of a uniform choice over the vocabulary."""
    return math.log2(vocab_size)


def strategies_table(rows: list[StrategyRow]) -> list[dict]:
    return [{"strategy": r.name, "kept tokens": r.kept, "entropy (bits)": round(r.entropy_bits, 3),
             "top token probability": round(r.top_prob, 4), "notes": " ".join(r.pipeline.notes)} for r in rows]


def continuation_metrics(res: ContinuationSet) -> list[tuple[str, str]]:
    return [("mean sum log-prob", f"{res.mean_logprob:.1f}"), ("distinct-2", f"{res.distinct_2:.2f}"),
            ("repetition rate", f"{res.mean_repetition:.2f}"),
            ("different texts", f"{res.n_unique} / {len(res.items)}")]


def continuations_table(res: ContinuationSet) -> list[dict]:
    return [{"#": i + 1, "continuation": c.text, "sum log-prob": round(c.logprob, 2),
             "perplexity": round(c.perplexity, 2), "repetition": round(c.repetition_rate, 2)}
            for i, c in enumerate(res.items)]


def beam_labels(result: BeamResult, label: Callable[[int], str]) -> dict[int, str]:
    """Labels for every token the tree and the greedy track show."""
    return {t: label(t) for t in [n.token_id for n in result.nodes[1:]] + list(result.greedy_ids)}


def beam_text(res: BeamResult) -> str:
    early = (" (stopped early by generate's default rule, early_stopping=False: it estimates that no running beam "
             "can still beat the finished ones; transformers' own documentation says this estimate may be wrong)"
             if res.stopped_early else "")
    best = res.best
    return (f"Width {res.settings.num_beams}, {res.steps} steps{early}: {len(res.nodes) - 1} candidates in the tree, "
            f"{res.forward_passes} forward passes; beam search {res.time_ms / 1000:.2f} s + greedy path "
            f"{res.greedy_time_ms / 1000:.2f} s, measured. Best beam: sum log-prob {best.cum_logprob:.3f} over "
            f"{best.length} tokens; greedy: {sum(res.greedy_logprobs):.3f} over {len(res.greedy_ids)}.")


def greedy_beats_beams(res: BeamResult) -> bool:
    """Greedy found a likelier sequence of the same length than the best beam (beam search is a heuristic)."""
    return (bool(res.greedy_ids) and len(res.greedy_ids) == res.best.length
            and sum(res.greedy_logprobs) > res.best.cum_logprob)


# ---------------------------------------------------------------- the lesson's prose, section by section
INTRO = ("The model only gives **logits**, one score per token of the vocabulary. How the next token is "
         "*chosen* from them is a separate, cheap piece of arithmetic: **temperature**, **top-k**, **top-p "
         "(nucleus)** and **min-p** reshape the distribution, then one token is drawn. Everything here works "
         "on one cached set of logits, so moving a slider never runs the model.")


def stage_maths(pipe: decode.Pipeline, label: Callable[[int], str]) -> list[tuple[str, str]]:
    """What each stage computes, in order, as ("markdown" | "latex", text): the formulas and this context's numbers."""
    return [("markdown", "**Softmax with temperature**"), ("latex", r"p_i = \frac{e^{z_i/T}}{\sum_j e^{z_j/T}}"),
            ("markdown", temperature_text(pipe, label)),
            ("markdown", "**Top-k** keeps the k highest logits. **Nucleus (top-p)** keeps the smallest set "
                         "Vₚ of top tokens whose mass reaches p:"),
            ("latex", r"\textstyle\sum_{i \in V_p} p_i \ge p"),
            ("markdown", "**Min-p** drops every token with"), ("latex", r"p_i < p_{\min} \cdot \max_j p_j"),
            ("markdown", filters_text(pipe))]


INVERSE_CDF = ("Inverse CDF: line the kept tokens up, each owning an interval as wide as its probability; "
               "draw u uniformly in [0, 1) and take the token whose interval holds it.")
MULTINOMIAL = ("The engine (like generate) draws with torch.multinomial, a different but equivalent way to "
               "sample the same distribution, so for the same seed its token can differ.")
SWEEP_NOTE = ("As T → 0 the top token takes all the mass (greedy); as T grows the distribution flattens "
              "towards uniform. The dashed line is the lab's temperature.")


def capped_draws(asked: int, drawn: int) -> str:
    return f"{asked:,} is above the cap; drawing {drawn:,}."


def redraw_caption(total_ms: float, math_ms: float) -> str:
    return f"This section redrew in {total_ms:.0f} ms ({math_ms:.0f} ms of sampling math), measured; no forward pass."


def entropy_caption(vocab_size: int) -> str:
    return ("Same logits, temperature 1 unless named. Entropy H = −Σ p log₂ p in bits: 0 means certain; a "
            f"uniform choice over all {vocab_size:,} tokens would be {uniform_bits(vocab_size):.1f}.")


CONTINUATIONS = ("K continuations of M tokens under two strategies, all K in one batch on one KV cache (one forward "
                 "pass per step). Greedy is deterministic: its K continuations are identical and often loop; high "
                 "temperature drifts away from the topic.")
PRESS_CONTINUATIONS = "Press **Generate continuations**: it runs the model."
OTHER_SETTINGS = "Shown: the last run; its settings differ from the ones above (press the button to redo)."
CONTINUATION_METRICS = ("Sum log-prob: Σ log p(token | everything before) under the model's own softmax. distinct-2: "
                        "distinct token pairs ÷ all token pairs over the K texts. Repetition: share of 3-token runs "
                        "already seen earlier in the same text.")


def too_long(new_tokens: int, max_positions: int | None = None) -> str:
    """The context leaves no room for ``new_tokens`` more (the model's limit named when given)."""
    limit = f" ({max_positions} positions at most)" if max_positions is not None else ""
    return f"The context is too long for {new_tokens} more tokens{limit}."


def continuation_progress(which: int, done: int, m: int) -> tuple[float, str]:
    """The progress bar while strategy ``which`` (0 = A, 1 = B) has written ``done`` of ``m`` tokens."""
    return (which * m + done) / (2 * m), f"strategy {'AB'[which]}: token {done} of {m}"


def run_caption(res: ContinuationSet) -> str:
    return f"{res.steps} decode steps, {res.forward_passes} forward passes, {res.time_ms / 1000:.1f} s, measured."


BEAMS = ("Keep the B best partial sequences, extend each by every token, and keep the B best of all "
         "extensions. A beam that emits EOS (or reaches the last step) is set aside as a finished hypothesis. "
         "Width 1 is (almost) greedy.")
BEAM_USES = ("Beam search is the usual choice where one right answer exists and short, likely outputs are wanted: "
             "machine translation, speech recognition, summarising. In open-ended writing its hunt for the most "
             "likely text pulls towards safe, generic and repetitive phrases, because human text is rarely the most "
             "likely continuation at every step; chat models therefore sample.")
BEAM_SCORE_LATEX = r"\text{score}(y) = \frac{1}{|y|^{\alpha}}\sum_{t=1}^{|y|} \log p(y_t \mid x, y_{<t})"
LENGTH_PENALTY = ("Running beams are ranked by the raw sum of log-probs; the length penalty (sum log p / length^α) "
                  "is applied to finished hypotheses. α > 0 favours longer finished hypotheses; α = 0 ranks them by "
                  "the plain sum too.")
PRESS_BEAMS = ("Press **Run beam search**: it runs the model, one forward pass per step for all beams, "
               "reordering the KV cache to follow the surviving beams.")
OTHER_BEAM_SETTINGS = "Shown: the last run; its settings differ from the sliders (press the button to redo)."
GREEDY_WINS = ("Here the greedy path is *more* likely than every beam: beam search is a heuristic, and greedy's "
               "prefix fell out of the top B at some step (look for its tokens among the grey pruned nodes). "
               "Wider beams or another length penalty may recover it.")


# ---------------------------------------------------------------- predict, then check (questions.py)
# Each question: (ask, choices, answer template). The answer names the right choice itself.
SAMPLING_TEMPERATURE = ("Temperature 0.5 instead of 1.0 (nothing else on): does the top token's probability rise or "
                        "fall at this step?",
                        ("it rises", "it falls", "it stays the same"),
                        "Measured on this step's logits: **{p1:.1%}** at T = 1.0, **{p05:.1%}** at T = 0.5. Dividing "
                        "the logits by T < 1 stretches the gaps between them, so the softmax favours the leader more.")
SAMPLING_TOP_P = ("Top-p = 0.9 alone: how many of the {vocab:,} tokens can still be drawn at this step?",
                  ("just 1", "2 to 10", "11 to 100", "more than 100"),
                  "**{kept:,}** tokens: the smallest set of most likely tokens whose probabilities add up to at least "
                  "0.9 (here {mass:.1%}). A confident step keeps few; an open one keeps many.")
SAMPLING_TOP_K = ("Top-k = 5 alone (T = 1): after renormalising, is the top token's probability higher, the same or "
                  "lower than in the raw softmax?",
                  ("higher", "the same", "lower"),
                  "At this step: **{p_raw:.1%}** in the raw softmax, **{p_k:.1%}** after top-k = 5. The five kept "
                  "tokens held {mass:.1%} of the probability, and renormalising divides each by that share, so a "
                  "kept token can gain but never lose.")


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading or tab label
    "The pipeline, stage by stage": (
        "The logits pass through each processor in a fixed order (repetition penalty, temperature, top-k, top-p, "
        "min-p); every stage shows what it removed or reshaped.",
        "Turn on top-k = 5 and top-p = 0.5 together: which one ends up deciding?",
        "Does the order of top-k and top-p matter, and can you think of a case where it would?"),
    "The draw": (
        "A draw is one uniform random number placed on the cumulative distribution: the token whose slice it "
        "lands in is picked. The seed fixes that number.",
        "Change the seed a few times and note how often the top token wins.",
        "With the same seed and the same settings, will the draw ever differ? Why does that matter for a demo?"),
    "Draw many": (
        "Drawing many times builds a histogram that settles on the probabilities; the whiskers show how far a "
        "count may wander by chance.",
        "Draw 100 times, then 10,000 times, and compare the largest gap between frequency and probability.",
        "How many draws would you need to tell a 1% token from a 2% token?"),
    "Temperature sweep": (
        "The same logits at many temperatures: low temperatures pile the mass on the leader, high ones spread it.",
        "Find the temperature at which the top token drops below one half.",
        "Why does temperature 0 mean 'always the top token' rather than 'divide by zero'?"),
    "2 · Strategies side by side": (
        "The same logits as above through seven settings at once: greedy, temperatures 0.7, 1.0 and 1.5, and top-k, "
        "top-p and min-p at T = 1. No token is drawn here: each panel shows what its setting keeps (grey: removed) "
        "and how spread out what is left is.",
        "Lower the p of the top-p strategy step by step and watch its kept tokens in the table: at which p does "
        "it keep fewer tokens than the top-k strategy?",
        "Top-k's count of kept tokens is set by k; top-p's and min-p's follow how sure the model is. Which would "
        "you want for code, and which for a story?"),
    "3 · Continuations": (
        "Several continuations drawn from the same start show how far sampling can wander from one prompt.",
        "Raise the temperature and draw again: when do the continuations stop making sense?",
        "Do low-probability tokens early in a continuation change everything after them?"),
    "4 · Beam search": (
        "Beam search keeps the few most likely partial texts at each step instead of one; pruned beams are grey.",
        "Compare beam width 1 (greedy) with 4: does the best beam start with the greedy token?",
        "Beam search is standard in translation but rare in chat. Why might it make open-ended text dull?"),
}
