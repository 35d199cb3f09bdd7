"""Every term the app uses, in one place, with the pages that use it; and the units.

The glossary page draws these entries; other pages may link to ``/glossary#term-anchor``.
Plain data (no Streamlit): a test checks every entry has a definition and a page that exists.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from autoreg_core.experiments.guess_score import POINTS_PER_BIT

TTFT_MEANS = ("from the request's arrival to its first new token: any wait in a queue, then the prefill over the "
              "whole prompt, then choosing the first token")  # the app's one definition; each chart says which parts
INTRO = ("The words this app uses, each with where you can see it happen. Terms are grouped in the order "
         "a lesson meets them. Units are reconciled at the end.")


@dataclass(frozen=True)
class Term:
    """One glossary entry: the term, what it means, and the page (url path) where it is shown."""
    name: str
    meaning: str
    page: str  # the url path of the page that shows it

    @property
    def anchor(self) -> str:
        """A stable id for links (``/glossary#top-p``)."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


START, STEP, TOKENS, ATTENTION, SAMPLING, COST, INSIDE, SERVING, CLASS, TRICKS = (
    "start", "step", "tokens", "attention", "sampling", "cost", "inside", "serving", "class", "tricks")
HOOD = "hood"
# in the navigation's order
PAGE_TITLES = {START: "Start here", STEP: "Step through generation", TOKENS: "Tokens",
               ATTENTION: "Attention and the KV cache", SAMPLING: "Sampling lab", COST: "Naive vs KV cache",
               INSIDE: "Inside generation", SERVING: "How servers go fast", CLASS: "Class",
               HOOD: "Under the hood",
               TRICKS: "More serving tricks"}

GROUPS: dict[str, tuple[Term, ...]] = {
    "The loop": (
        Term("Token", "A piece of text from the model's fixed vocabulary: a word, part of a word, a "
             "space plus a word, or a single byte. The model reads and writes token ids, not letters.", TOKENS),
        Term("Vocabulary", "Every token the model knows (the embedded SmolLM2: 49,152; the Tokens page reads the "
             "loaded model's size from its tokenizer). The logits have at least one score per vocabulary entry: some "
             "models pad the logits with entries no token uses (Qwen's models, for one, for efficiency).", TOKENS),
        Term("Byte-level BPE", "A tokenizer that merges frequent byte sequences into tokens; any text can "
             "still be written from single bytes, so no character is unknown.", TOKENS),
        Term("Autoregressive", "Each new token is predicted from all the tokens before it, then appended "
             "and used as input for the next prediction.", STEP),
        Term("Prefill", "The first forward pass, over the whole prompt at once. It fills the KV cache "
             "and gives the distribution of the first new token.", STEP),
        Term("Decode step", "One later forward pass: only the newest token goes in, the cached keys and "
             "values of all earlier tokens are reused, and one distribution comes out.", STEP),
        Term("Forward pass", "Running the network once on some input positions, from embeddings through "
             "every layer to the logits.", STEP),
        Term("Layer", "One block of the network: attention, then a feed-forward network (MLP, 3 in 4 of a layer's "
             "weights in the embedded SmolLM2), each "
             "behind a normalisation and added back onto its input. The model stacks them (the embedded SmolLM2 "
             "has 30), and each layer keeps its own keys and values in the cache.", ATTENTION),
        Term("Hidden state", "The vector of numbers a position carries from layer to layer. The last layer's, "
             "after the final norm, becomes the logits; the logit lens reads earlier ones the same way.", INSIDE),
        Term("Logits", "One raw score per vocabulary token, computed as W·h + b from the last hidden "
             "state h (each row of W works like a template the state is compared with).", STEP),
        Term("Softmax", "Turns logits into probabilities: exp(logit) divided by the sum of exp over "
             "the vocabulary, so they are positive and add up to 1.", STEP),
        Term("Chain rule", "The probability of a whole sequence is the product of each token's "
             "probability given the tokens before it.", STEP),
        Term("Log-prob", "The natural logarithm of a token's probability (in nats). Summing log-probs "
             "multiplies probabilities without underflow.", STEP),
        Term("Perplexity", "exp of the mean negative log-prob of the chosen tokens: how surprised the model was by "
             "them, as a number of equally likely choices. For greedy text it understates the model's uncertainty "
             "(it always took the likeliest token); the entropy of each step measures the hesitation.", STEP),
        Term("Entropy", "How spread a distribution is, −Σ p log₂ p, in bits: 0 when one token is "
             "certain, higher when many are plausible.", STEP),
        Term("EOS", "The end-of-sequence token. When the model picks it, generation stops; in chat "
             "mode it is the end-of-turn marker.", STEP),
        Term("Stop sequence", "A string that ends generation when it appears in the output "
             "(transformers' generate calls them stop_strings).", STEP),
        Term("max_new_tokens", "How many tokens may be generated after the prompt. max_length instead "
             "counts the prompt too.", STEP),
    ),
    "Choosing a token": (
        Term("Greedy", "Always take the most probable token (temperature 0). Deterministic, often "
             "repetitive.", SAMPLING),
        Term("Temperature", "Divide the logits by T before the softmax: T < 1 sharpens the distribution, "
             "T > 1 flattens it.", SAMPLING),
        Term("Top-k", "Keep only the k most probable tokens, renormalise, sample among them.", SAMPLING),
        Term("Top-p (nucleus)", "Keep the smallest set of most probable tokens whose probabilities add "
             "up to at least p, renormalise, sample.", SAMPLING),
        Term("Min-p", "Keep tokens whose probability is at least min-p times the top token's "
             "probability.", SAMPLING),
        Term("Repetition penalty", "Lowers the logits of tokens already in the text, to discourage "
             "loops.", SAMPLING),
        Term("Seed", "Starts the random number generator, so the same settings draw the same tokens "
             "again.", SAMPLING),
        Term("Beam search", "Keeps the B best partial sequences by total log-prob at each step instead "
             "of one. Common in translation; in open-ended text it drifts toward generic, repetitive "
             "wording.", SAMPLING),
        Term("Length penalty", "How beam search ranks finished hypotheses: the sum of log-probs divided by "
             "length^α. α > 0 favours longer finished hypotheses; α = 0 ranks them by the plain sum.", SAMPLING),
        Term("Standard error", "How far an estimate typically lands from the truth by chance. A token drawn with "
             "probability p shows up in N draws with frequency p ± √(p(1 − p)/N): four times the draws halve "
             "the wobble.", SAMPLING),
    ),
    "Attention and the KV cache": (
        Term("Query, key, value", "Each position makes a query, a key and a value. A query's dot "
             "products with the keys, softmaxed, weigh how much of each value it mixes in.", ATTENTION),
        Term("Attention head", "One of several attention computations a layer runs side by side, each with its "
             "own queries (and, without GQA, its own keys and values), so each can look at different "
             "positions. The attention page shows one head, all heads of a layer, or their mean.", ATTENTION),
        Term("Causal mask", "A position may attend only to itself and earlier positions, never to "
             "later ones. This is why earlier keys and values never change.", ATTENTION),
        Term("KV cache", "The stored keys and values of every earlier position, per layer. A decode "
             "step adds one row and reuses the rest instead of recomputing them.", ATTENTION),
        Term("GQA (grouped-query attention)", "Several query heads share one key/value head, so the "
             "cache stores fewer heads (the embedded SmolLM2: 9 query heads read 3 cached heads).", ATTENTION),
        Term("Context window", "The most positions the model was trained to handle; a server refuses or cuts a "
             "longer text (llama.cpp's context shift, when turned on, keeps the BOS token, if there is one, "
             "and as many first tokens after it as its --keep setting says, meant for a system prompt, and by "
             "default drops the older half of the rest).",
             INSIDE),
        Term("Sliding window", "A cache that keeps only the last W − 1 positions: the new token makes W, so it "
             "sees itself and the W − 1 before it. The cache stops growing, and whatever slid out of the window is "
             "gone for the model. It is for models trained with one.", INSIDE),
        Term("PagedAttention", "vLLM's way of storing KV caches in small fixed-size blocks that need not sit "
             "next to each other, taken as a request grows: no request reserves room for its maximum length, and "
             "requests with a common prefix share its blocks (Kwon et al., 2023). It packs more caches into "
             "memory; it does not make one smaller.", INSIDE),
    ),
    "Cost": (
        Term("FLOPs", "Floating-point operations; one multiply-add counts as 2. The app counts them from the "
             "model's shape, and FLOP/s is how many a machine does per second.", COST),
        Term("Naive decoding", "Recomputing the whole sequence at every step instead of using a cache: "
             "T tokens cost 1 + 2 + … + T = T(T+1)/2 positions processed.", COST),
        Term("Memory-bound", "A step whose time is set by how fast bytes (weights, cache) are read, not "
             "by arithmetic. A decode step at batch 1 usually is.", COST),
        Term("Compute-bound", "A step whose time is set by arithmetic throughput. A long prefill "
             "usually is.", COST),
        Term("Arithmetic intensity", "Floating-point operations per byte read. Below the machine's "
             "ridge point (peak FLOP/s ÷ bandwidth) a step is memory-bound.", COST),
        Term("Ridge point", "Peak FLOP/s ÷ memory bandwidth, in FLOP per byte: the arithmetic intensity at which "
             "a machine stops waiting on memory. CPUs sit low, large GPUs high.", COST),
        Term("Roofline", "A chart of the fastest a step can run against its arithmetic intensity: a sloped roof "
             "set by memory bandwidth, then a flat roof set by peak FLOP/s, meeting at the ridge point. A "
             "measured step sits on or under it.", COST),
        Term("Time to first token", f"{TTFT_MEANS[0].upper()}{TTFT_MEANS[1:]}.", INSIDE),
    ),
    "Inside generation": (
        Term("Teacher forcing", "Training reads the true text and predicts every next token at once, "
             "in one pass, always from correct prefixes.", INSIDE),
        Term("Exposure bias", "The mismatch that teacher forcing leaves: the model never practised "
             "continuing from its own mistakes, which it must do when generating.", INSIDE),
        Term("Logit lens", "Reading an intermediate layer's hidden state through the final norm and LM "
             "head, to see which token that layer already favours.", INSIDE),
    ),
    "Serving": (
        Term("Batch", "Several sequences run through one forward pass together; the weights are read "
             "once for all of them.", SERVING),
        Term("Continuous batching", "A server adds new requests to, and removes finished ones from, the "
             "running batch at every step instead of waiting for the whole batch. Not every batched step is "
             "continuous batching: this server's passes that gather whichever tabs' steps are waiting keep no "
             "running batch; they batch one step at a time.", SERVING),
        Term("Speculative decoding", "A cheap draft proposes several tokens; the model checks them all "
             "in one verify pass and keeps the accepted prefix plus one token of its own (the correction at the "
             "first rejection, or a bonus token when all are kept), so every round yields at least one token.",
             SERVING),
        Term("Draft", "The cheap proposer in speculative decoding: a small model, a few layers of the "
             "same model, or text looked up earlier in the context.", SERVING),
        Term("Verify", "The model's single pass over the drafted tokens; draft token x is accepted with "
             "probability min(1, p(x)/q(x)).", SERVING),
        Term("Acceptance rate", "α: the chance that the verify pass keeps a guess it tests, given that it kept the "
             "guesses before it; the speculation formula's input (Leviathan et al., 2023). A run estimates it as kept "
             "÷ tested guesses, kept ÷ (kept + rounds that ended in a rejection). Guesses after the first rejection "
             "are never tested, so kept ÷ drafted, which vLLM logs as the draft acceptance rate, is lower: "
             "(α + α² + … + α^k) ÷ k when every tested guess is kept with the same α.", SERVING),
        Term("Quantization", "Storing weights (or the cache) in fewer bits, with a scale per block, row or "
             "tensor: less memory to read per step, at some cost in accuracy.", SERVING),
        Term("KL divergence", "How far one distribution is from another (here: a quantized model's next-token "
             "distribution from float32's), in bits; 0 means identical.", SERVING),
        Term("Weight-only quantization", "Only the stored weights are rounded to few bits (GGUF's Q8_0, Q4_1: a "
             "scale per block of 32). GPU kernels such as Marlin (for GPTQ and AWQ files) multiply them by 16-bit "
             "activations; llama.cpp's kernels for Q8_0 and Q4_1, on the CPU and in its CUDA back end (MMVQ, MMQ), "
             "also round each activation vector to 8 bits, in blocks of 32 with their own scale, and multiply in "
             "integers. Small scale blocks keep 8 bits close to float. The serving page's bit dial rounds the "
             "embedded model's weights, which were already stored in 4 bits in blocks of 32: at 4 bits in blocks it "
             "gives them back unchanged, so it cannot show what going down to 4 bits costs a model stored in more "
             "bits.", SERVING),
        Term("Tensor parallelism", "One layer's matrices split across several GPUs that work on the same step "
             "at once: each step gets shorter, but the number of sequential steps does not change.", SERVING),
        Term("Mixed precision", "Matrix products in 16-bit floats while softmax, normalisation and "
             "accumulation stay in 32-bit.", SERVING),
    ),
    "In a class": (
        Term("Surprisal", "How surprising a token was to the model: −log₂ p, in bits. A token with p = ½ has 1 bit, "
             f"p = 1/1024 has 10. A class guess scores 100 points minus {POINTS_PER_BIT:.0f} per bit.", CLASS),
        Term("Prefix tree", "Many continuations of the same text merged by their shared beginnings: every branch "
             "is a token after the tokens to its left, counted by how many continuations took it.", CLASS),
    ),
    "Under the hood": (
        Term("Cross-entropy loss", "What training makes small: the mean of −log p over the actual next tokens of "
             "a text, in nats. exp(loss) is the perplexity.", HOOD),
        Term("Rotary position embedding (RoPE)", "How Llama-style models know order: each query and key is "
             "rotated, pair of dimensions i by the angle pos · base^(−2i/d), so attention sees the distance "
             "between two tokens.", HOOD),
        Term("Position id", "The number a token's rotation is computed from: 0 for the first token, and the "
             "cache's length for the token a decode step feeds.", HOOD),
        Term("Left padding", "Rows of different lengths in one batch are aligned at the right, with pad columns "
             "on the left that the attention mask hides; each row keeps its own position ids.", HOOD),
        Term("Batch invariance", "Getting the same numbers for a request whatever else shares its forward pass. "
             "Floating-point sums in another order break it by a little, enough to swap a near-tie.", HOOD),
        Term("Near-tie", "Two top tokens whose logits are so close that a tiny change in the arithmetic can swap "
             "which one greedy decoding picks.", HOOD),
    ),
    "More serving tricks": (
        Term("Prefix caching", "Keeping the KV cache of recent prompts so a request that starts the same way skips "
             "that part of the prefill. This app keeps whole prompts, keyed by their exact token ids, model and dtype, "
             "with their next-token logits, and hands each tab a copy. vLLM's automatic prefix caching and SGLang's "
             "RadixAttention share the cached keys and values between requests by reference instead of copying them, "
             "matched by whole blocks (vLLM) or, by default, token by token (SGLang), and keep no logits.", TRICKS),
        Term("Constrained decoding", "Generation where a grammar (a JSON schema, a regular expression, a list of "
             "choices) decides which tokens may come next, so the answer is valid by construction, provided it is "
             "complete within the token limit.", TRICKS),
        Term("Grammar mask", "The sampling stage of constrained decoding: every token the grammar cannot accept "
             "next gets a logit of −∞, before temperature and the other filters.", TRICKS),
        Term("Expected tokens per round", "What one draft-and-verify round of speculative decoding emits on "
             "average: (1 − α^(k+1)) / (1 − α) for k guesses when every tested guess is kept with the same "
             "acceptance rate α, independently; k + 1 when α = 1.", TRICKS),
    ),
}

# Every term each page uses, so its "Terms" popover reaches them all (a term may be on
# several pages). A test checks each name is an entry, each entry's own page lists it, and that a term
# whose words appear in a page's sentences is in that page's list.
LOOP_WORDS = ("Token", "Prefill", "Decode step", "Forward pass", "Logits", "KV cache")
PAGE_TERMS: dict[str, tuple[str, ...]] = {
    START: LOOP_WORDS + (
        "Vocabulary", "Softmax", "Temperature", "Top-k", "Top-p (nucleus)", "Greedy", "Seed", "Log-prob",
        "Beam search", "Layer",
        "Attention head", "Hidden state", "Causal mask", "GQA (grouped-query attention)", "Naive decoding",
        "Teacher forcing", "Logit lens", "Batch", "Continuous batching", "Speculative decoding", "Draft",
        "Verify", "Acceptance rate", "Tensor parallelism", "PagedAttention", "Query, key, value", "Near-tie"),
    STEP: LOOP_WORDS + (
        "Near-tie", "Vocabulary", "Autoregressive", "Hidden state", "Softmax", "Chain rule", "Log-prob", "Perplexity",
        "Entropy", "EOS", "Stop sequence", "max_new_tokens", "Greedy", "Temperature", "Top-k", "Top-p (nucleus)",
        "Min-p", "Repetition penalty", "Seed", "Beam search", "Teacher forcing", "Exposure bias", "Batch",
        "Continuous batching", "Speculative decoding", "Draft", "Quantization", "Mixed precision",
        "Tensor parallelism"),
    TOKENS: LOOP_WORDS + ("Vocabulary", "Byte-level BPE"),
    ATTENTION: LOOP_WORDS + (
        "Layer", "Attention head", "Hidden state", "Query, key, value", "Softmax", "Causal mask",
        "GQA (grouped-query attention)", "Context window", "Sliding window", "Quantization", "Batch", "Memory-bound",
        "Compute-bound", "Ridge point"),
    SAMPLING: LOOP_WORDS + (
        "Vocabulary", "Softmax", "Log-prob", "Perplexity", "Entropy", "EOS", "max_new_tokens", "Greedy",
        "Temperature", "Top-k", "Top-p (nucleus)", "Min-p", "Repetition penalty", "Seed", "Beam search",
        "Length penalty", "Standard error", "Batch"),
    COST: LOOP_WORDS + (
        "Vocabulary", "Layer", "Attention head", "Query, key, value", "Naive decoding", "FLOPs", "Memory-bound",
        "Compute-bound", "Arithmetic intensity", "Ridge point", "Roofline", "Batch"),
    INSIDE: LOOP_WORDS + (
        "Vocabulary", "Layer", "Hidden state", "Softmax", "Log-prob", "EOS", "Greedy", "Temperature", "Seed",
        "Causal mask", "Context window", "Sliding window", "PagedAttention", "Time to first token",
        "Memory-bound", "Compute-bound", "Teacher forcing", "Exposure bias", "Logit lens"),
    SERVING: LOOP_WORDS + (
        "Layer", "Greedy", "Temperature", "Seed", "Perplexity", "Time to first token", "FLOPs", "Memory-bound",
        "Compute-bound", "Arithmetic intensity", "Ridge point", "Batch", "Continuous batching",
        "Speculative decoding", "Draft", "Verify", "Acceptance rate", "Quantization", "KL divergence",
        "Weight-only quantization", "Mixed precision", "Tensor parallelism", "PagedAttention", "Near-tie"),
    CLASS: LOOP_WORDS + (
        "Softmax", "Temperature", "Seed", "Greedy", "Top-k", "Top-p (nucleus)", "Min-p", "Repetition penalty",
        "max_new_tokens", "Surprisal", "Prefix tree", "Batch"),
    HOOD: ("Token", "Prefill", "Decode step", "Forward pass", "Logits", "Softmax", "Log-prob", "Perplexity", "Entropy",
           "Teacher forcing", "Causal mask", "Greedy", "Temperature", "Batch", "KL divergence", "Layer",
           "Query, key, value", "Cross-entropy loss", "Rotary position embedding (RoPE)", "Position id",
           "Left padding", "Batch invariance", "Near-tie"),
    TRICKS: LOOP_WORDS + (
        "Speculative decoding", "Draft", "Verify", "Acceptance rate", "Greedy", "Prefix caching",
        "Constrained decoding", "Grammar mask", "Expected tokens per round", "Attention head", "Layer", "Temperature",
        "Vocabulary", "Standard error"),
}


UNITS_TITLE = "Units, once for the whole app"
UNITS = (
    "- **Log-probs** are natural logarithms, in **nats**; perplexity is exp of the mean negative log-prob.\n"
    "- **Entropy and KL divergence** are in **bits** (log base 2): 1 bit is a fair coin's uncertainty.\n"
    "- **Bytes** use binary units: 1 KiB = 1,024 bytes, 1 MiB = 1,024² bytes, 1 GiB = 1,024³ bytes. "
    "Disk and network GB are decimal (10⁹ bytes); GPU memory sizes are binary in practice: an 80 GB A100 has "
    "80 GiB.\n"
    "- **Times** are milliseconds (ms) of wall clock on the machine running this app, measured live."
)


def all_terms() -> list[Term]:
    """Every entry, in the glossary's order."""
    return [term for group in GROUPS.values() for term in group]


def term_named(name: str) -> Term:
    """The entry called ``name`` (KeyError if the glossary has none)."""
    for term in all_terms():
        if term.name == name:
            return term
    raise KeyError(name)


def link(term: Term) -> str:
    """Where the glossary page shows this entry: ``/glossary#anchor``."""
    return f"/glossary#{term.anchor}"


def pages_of(term: Term) -> list[str]:
    """The pages whose popover lists this term: its own page first, then the others in navigation order."""
    others = [page for page, names in PAGE_TERMS.items() if term.name in names and page != term.page]
    return [term.page] + others


def entry_markdown(term: Term) -> str:
    """One entry's body as Markdown (the term itself is its heading): its meaning and the pages that use it."""
    where = " · ".join(f"[{PAGE_TITLES[page]}](/{page})" for page in pages_of(term))
    return f"{term.meaning} *Seen on:* {where}."


TERMS_HERE = "Terms"  # short: it shares the head row with the title on a projector with the sidebar open
WHOLE_GLOSSARY = "The whole glossary, with units"


def terms_on(page: str) -> list[Term]:
    """The entries this page uses, in glossary order."""
    names = set(PAGE_TERMS.get(page, ()))
    return [term for term in all_terms() if term.name in names]


@functools.lru_cache(maxsize=64)
def terms_markdown(page: str) -> str:
    """The page's terms with their meanings, each name a link to its glossary entry (opens in a new tab). Made once
    per page: the popover is drawn on every run (a class follower's page, on every teacher step)."""
    return "\n".join(f"- [**{term.name}**]({link(term)}): {term.meaning}" for term in terms_on(page))

