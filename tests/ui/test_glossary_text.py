"""The glossary's entries: complete, unique anchors, every page real, the units in one place; and every
page's "Terms on this page" popover reaching each term that page uses, each with a link to its entry."""
import re
from pathlib import Path

import pytest

from autoreg_ui import glossary_text as text
from autoreg_ui import site_pages

ROOT = Path(__file__).resolve().parents[2]
# the terms a learner meets on the pages, each must have an entry (matched against the entry names, case-insensitive),
# and those the audit of the issue found missing
REQUIRED = ("prefill", "decode step", "kv cache", "logits", "softmax", "temperature", "top-k", "top-p", "min-p",
            "greedy", "beam", "eos", "stop sequence", "log-prob", "perplexity", "entropy", "gqa", "draft",
            "verify", "acceptance rate", "batch", "continuous batching", "memory-bound", "arithmetic intensity",
            "logit lens", "teacher forcing", "exposure bias")
ADDED = ("sliding window", "roofline", "flops", "pagedattention", "length penalty", "standard error",
         "hidden state", "layer", "attention head")


@pytest.mark.parametrize("wanted", [REQUIRED, ADDED], ids=["issue", "audit"])
def test_every_required_term_has_an_entry(wanted):
    names = [t.name.lower() for t in text.all_terms()]
    missing = [term for term in wanted if not any(term in name for name in names)]
    assert missing == []


def test_anchors_are_unique_slugs():
    anchors = [t.anchor for t in text.all_terms()]
    assert len(anchors) == len(set(anchors)) == len(text.all_terms())
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", a) for a in anchors)
    assert text.Term("Top-p (nucleus)", "x", "").anchor == "top-p-nucleus"
    assert text.link(text.term_named("KV cache")) == "/glossary#kv-cache"


def test_every_entry_points_at_a_page_of_the_app():
    app = {page.url_path for page in site_pages.SITE_PAGES}  # the page list app.py navigates
    assert list(text.PAGE_TITLES) == list(text.PAGE_TERMS)  # one popover list per page, in menu order
    for term in text.all_terms():
        assert term.meaning.endswith(".") and len(term.meaning) > 40, term.name
        assert term.page in text.PAGE_TITLES
        assert term.page in app, term.page
    for page in text.PAGE_TITLES:
        assert page in app, page


def test_units_name_nats_bits_and_binary_bytes():
    assert "nats" in text.UNITS and "bits" in text.UNITS and "1 GiB = 1,024³ bytes" in text.UNITS


def test_an_entry_says_every_page_that_uses_it_its_own_page_first():
    kv = text.term_named("KV cache")
    assert text.pages_of(kv) == ["attention", "start", "step", "tokens", "sampling", "cost", "inside", "serving",
                                 "class", "tricks"]
    assert text.entry_markdown(kv) == (kv.meaning + " *Seen on:* [Attention and the KV cache](/attention) · "
                                       "[Start here](/start) · [Step through generation](/step) · [Tokens](/tokens) · "
                                       "[Sampling lab](/sampling) · [Naive vs KV cache](/cost) · "
                                       "[Inside generation](/inside) · [How servers go fast](/serving) · "
                                       "[Class](/class) · "
                                       "[More serving tricks](/tricks).")
    bpe = text.term_named("Byte-level BPE")
    assert text.entry_markdown(bpe) == bpe.meaning + " *Seen on:* [Tokens](/tokens)."


def test_every_name_in_a_popover_is_an_entry_and_every_entry_is_in_its_own_pages_popover():
    for page, names in text.PAGE_TERMS.items():
        assert len(names) == len(set(names)), page
        for name in names:
            text.term_named(name)  # KeyError names the stray term
    for term in text.all_terms():
        assert term.name in text.PAGE_TERMS[term.page], term.name


def test_the_audits_examples_are_reachable_where_they_were_missing():
    on = {page: {t.name for t in text.terms_on(page)} for page in text.PAGE_TERMS}
    assert {"KV cache", "Prefill", "Decode step"} <= on["cost"]
    assert "Memory-bound" in on["serving"]
    assert {"Prefill", "Decode step"} <= on["attention"]
    assert {"Prefill", "Decode step", "KV cache", "Speculative decoding"} <= on["start"]


# A term counts as used on a page when one of these words is in the page's sentences (its file, its text
# module and its controller); by default the term's own name without the bracket. "Token" is on every page.
WORDS = {"Query, key, value": ("query",), "GQA (grouped-query attention)": ("grouped-query", "gqa"),
         "Top-p (nucleus)": ("top-p",), "FLOPs": ("flop",), "Attention head": ("query head", "kv head", "k/v head"),
         "Memory-bound": ("memory-bound", "memory-bandwidth-bound"), "Log-prob": ("log-prob", "log p"),
         "Byte-level BPE": ("byte-level",), "Speculative decoding": ("speculative",)}
LESSON_SOURCES = {"start": ("page", "text", "numbers"), "step": ("page", "text"), "tokens": ("page", "text"),
                  "attention": ("page", "text", "controller"), "sampling": ("page", "text", "controller"),
                  "cost": ("page", "text", "controller"), "inside": ("page", "text", "controller"),
                  "serving": ("page", "text", "controller"), "hood": ("page", "text", "controller"),
                  "tricks": ("page", "text", "controller")}
SOURCES = {page: tuple(f"autoreg_ui/lessons/{page}/{module}.py" for module in modules)
           for page, modules in LESSON_SOURCES.items()} | {"class": ("pages/class.py", "autoreg_ui/classroom/text.py")}


def _used_on(page: str) -> set[str]:
    said = " ".join(line for f in SOURCES[page] for line in (ROOT / f).read_text().lower().splitlines()
                    if not line.lstrip().startswith(("import ", "from ")))  # what the page says, not what it imports
    return {t.name for t in text.all_terms() if t.name != "Token"
            and any(w in said for w in WORDS.get(t.name, (re.sub(r"\s*\(.*\)", "", t.name.lower()),)))}


def test_a_term_a_page_uses_is_in_that_pages_popover():
    assert set(SOURCES) == set(text.PAGE_TERMS)
    missing = {page: sorted(_used_on(page) - set(text.PAGE_TERMS[page])) for page in SOURCES}
    assert {page: names for page, names in missing.items() if names} == {}
    assert {"Roofline", "Ridge point", "FLOPs"} <= _used_on("cost")  # the scan finds what it looks for


def test_the_popover_lists_each_term_with_its_meaning_and_a_link_to_its_entry():
    md = text.terms_markdown("cost")
    lines = md.split("\n")
    assert lines == [f"- [**{t.name}**](/glossary#{t.anchor}): {t.meaning}" for t in text.terms_on("cost")]
    assert len(lines) == len(text.PAGE_TERMS["cost"])
    assert text.terms_markdown("no-such-page") == ""


def test_the_corrected_entries_say_what_the_engine_does():
    term_named = text.term_named
    from autoreg_ui.glossary_text import UNITS

    # SmolLM2-135M's layer: MLP 3 · 576 · 1536 weights, attention 2 · 576² + 2 · 576 · 192 (3 KV heads of 64)
    mlp, attention, norms = 3 * 576 * 1536, 2 * 576 * 576 + 2 * 576 * 192, 2 * 576
    assert round(mlp / (mlp + attention + norms), 2) == 0.75
    assert "(MLP, 3 in 4 of a layer's weights in the embedded SmolLM2)" in term_named("Layer").meaning
    assert "small feed-forward" not in term_named("Layer").meaning
    assert "the entropy of each step measures the hesitation" in term_named("Perplexity").meaning
    assert term_named("Sliding window").meaning.startswith("A cache that keeps only the last W − 1 positions: the new "
                                                           "token makes W")
    assert term_named("Speculative decoding").meaning.endswith("so every round yields at least one token.")
    assert "nearly unchanged" not in term_named("Weight-only quantization").meaning
    assert "at 4 bits and below the answers move" not in term_named("Weight-only quantization").meaning
    assert "74.5 GiB" not in UNITS and "an 80 GB A100 has 80 GiB" in UNITS


def test_weight_only_quantization_says_what_gpu_kernels_do_and_what_the_bit_dial_cannot_show():
    """llama.cpp's CUDA MMVQ/MMQ kernels take Q8_1 activations (blocks of 32) and integer products; Marlin is
    fp16 x int4; the embedded weights were Q4_1, so the dial gives them back at 4 bits in blocks."""
    said = text.term_named("Weight-only quantization").meaning
    assert "GPU kernels then multiply in fp16 or bf16" not in said
    assert ("GPU kernels such as Marlin (for GPTQ and AWQ files) multiply them by 16-bit activations; llama.cpp's "
            "kernels for Q8_0 and Q4_1, on the CPU and in its CUDA back end (MMVQ, MMQ), also round each activation "
            "vector to 8 bits, in blocks of 32 with their own scale, and multiply in integers.") in said
    assert ("at 4 bits in blocks it gives them back unchanged, so it cannot show what going down to 4 bits costs a "
            "model stored in more bits.") in said


def test_continuous_batching_is_a_running_batch_not_any_batched_step():
    said = text.term_named("Continuous batching").meaning
    assert said.startswith("A server adds new requests to, and removes finished ones from, the running batch at "
                           "every step")
    assert ("Not every batched step is continuous batching: this server's passes that gather whichever tabs' steps "
            "are waiting keep no running batch; they batch one step at a time.") in said


def test_the_context_window_entry_gives_llama_cpps_own_rule_for_a_context_shift():
    meaning = text.term_named("Context window").meaning
    assert "keeps the first tokens and drops the oldest after them" not in meaning
    assert ("llama.cpp's context shift, when turned on, keeps the BOS token, if there is one, and as many first tokens "
            "after it as its --keep setting says, meant for a system prompt, and by default drops the older half of "
            "the rest") in meaning


def test_the_cold_reads_entries_say_no_more_than_the_code(tiny):
    """Logits: config.vocab_size entries, at least the tokenizer's (Qwen's configs pad theirs: QwenLM/Qwen#419,
    QwenLM/Qwen3#29); a draft looks up the whole context; int8 scales per row and per tensor, Q8_0 per block; a
    grammar's answer is valid only if it finishes within the token limit."""
    from autoreg_core.engine import decode

    vocab = text.term_named("Vocabulary").meaning
    assert "The logits have one score per vocabulary entry." not in vocab
    assert ("The logits have at least one score per vocabulary entry: some models pad the logits with entries no "
            "token uses") in vocab
    width = decode.forward(tiny, [[1, 2]], decode.new_cache(tiny)).logits.shape[-1]
    assert width == tiny.config.vocab_size >= len(tiny.tokenizer)  # "at least": the logits' width is the config's
    assert text.term_named("Draft").meaning.endswith("or text looked up earlier in the context.")
    assert "with a scale per block, row or tensor" in text.term_named("Quantization").meaning
    assert text.term_named("Constrained decoding").meaning.endswith(
        "so the answer is valid by construction, provided it is complete within the token limit.")
