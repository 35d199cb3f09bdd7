"""The glossary's entries: complete, unique anchors, every page real, the units in one place."""
import re
from pathlib import Path

from autoreg_ui import glossary_text as text

ROOT = Path(__file__).resolve().parents[2]
# the terms issue 18 asks for, each must have an entry (matched against the entry names, case-insensitive)
REQUIRED = ("prefill", "decode step", "kv cache", "logits", "softmax", "temperature", "top-k", "top-p", "min-p",
            "greedy", "beam", "eos", "stop sequence", "log-prob", "perplexity", "entropy", "gqa", "draft",
            "verify", "acceptance rate", "batch", "continuous batching", "memory-bound", "arithmetic intensity",
            "logit lens", "teacher forcing", "exposure bias")


def test_every_required_term_has_an_entry():
    names = [t.name.lower() for t in text.all_terms()]
    missing = [term for term in REQUIRED if not any(term in name for name in names)]
    assert missing == []


def test_anchors_are_unique_slugs():
    anchors = [t.anchor for t in text.all_terms()]
    assert len(anchors) == len(set(anchors)) == len(text.all_terms())
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", a) for a in anchors)
    assert text.Term("Top-p (nucleus)", "x", "").anchor == "top-p-nucleus"


def test_every_entry_points_at_a_page_of_the_app():
    app = (ROOT / "app.py").read_text()
    for term in text.all_terms():
        assert term.meaning.endswith(".") and len(term.meaning) > 40, term.name
        assert term.page in text.PAGE_TITLES
        if term.page:
            assert f'url_path="{term.page}"' in app, term.page


def test_units_name_nats_bits_and_binary_bytes():
    assert "nats" in text.UNITS and "bits" in text.UNITS and "1 GiB = 1,024³ bytes" in text.UNITS
    assert text.entry_markdown(text.all_terms()[0], "Step") == text.all_terms()[0].meaning + " *Seen on: Step.*"


def test_each_page_lists_the_terms_it_shows_and_together_they_are_the_glossary():
    pages = set(text.PAGE_TITLES)
    listed = [term for page in pages for term in text.terms_on(page)]
    assert sorted(t.name for t in listed) == sorted(t.name for t in text.all_terms())
    md = text.terms_markdown("sampling")
    assert md.count("\n- ") + 1 == len(text.terms_on("sampling")) >= 5
    assert all(f"**{t.name}**" in md for t in text.terms_on("sampling"))
    assert text.terms_markdown("no-such-page") == ""
