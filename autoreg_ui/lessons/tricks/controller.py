"""The tricks page's work: speculative runs read in the formula's symbols, the prefix-cache demonstration, and
constrained against unconstrained generation, each handed to the measuring gate; and the tables of their results.
Nothing here draws; the sentences are in ``text``."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import jsonschema
import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.session import encode_prompt
from autoreg_core.engine.tokens import token_views
from autoreg_core.experiments import constrained_decoding as grammar
from autoreg_core.experiments import speculative_decoding as speculative
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_core.runtime import prefix_cache
from autoreg_server import settings
from autoreg_ui.lessons.tricks import text
from autoreg_ui.measuring import Measured, Progress

GREEDY = SamplingConfig(temperature=0.0)
COPY_TEXT = ("The river runs past the old mill, under the stone bridge and on towards the sea, where the fishing "
             "boats wait for the tide and the gulls circle over the harbour wall.")
SPEC_PROMPTS = {"copying a text": f"Copy the text exactly.\nText: {COPY_TEXT}\nCopy: The river runs",
                "open-ended": "Once upon a time, in a small village by the sea,"}
MAX_TABS = 30


def exit_layer(spec) -> int:
    """The early-exit draft stops four fifths of the way up (the serving page's choice too)."""
    return max(1, min(spec.n_layers - 1, round(spec.n_layers * 0.8)))


def drafts(bundle) -> dict[str, Callable]:
    layers = exit_layer(bundle.spec)
    return {speculative.PROMPT_LOOKUP: lambda: speculative.PromptLookup(2),
            speculative.EARLY_EXIT: lambda: speculative.early_exit(bundle, layers)}


# ---------------------------------------------------------------- 1 · speculation's arithmetic
@dataclass(frozen=True)
class SpecRead:
    prompt: str
    read: spec_math.Measured
    best: spec_math.BestK


def spec_work(bundle, k: int, max_new: int, on_progress: Progress):
    """Both prompts: plain greedy decoding, then each draft; every pair read as α, c, v and speed-ups. A draft that
    guessed nothing on a prompt has no α to read: it is left out of the result."""
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
        speculative.check_draft_length(k)
        makers, found.result = drafts(bundle), []
        total, n = len(SPEC_PROMPTS) * (1 + len(drafts(bundle))), 0
        for label, prompt in SPEC_PROMPTS.items():
            ids = list(bundle.tokenizer(prompt)["input_ids"])
            on_progress(n / total, f"“{label}”: plain decoding")
            plain = speculative.plain_decode(bundle, ids, max_new, GREEDY, should_stop=should_stop)
            n += 1
            for name, make in makers.items():
                on_progress(n / total, f"“{label}”: {name}, k = {k}")
                run = speculative.speculate(bundle, ids, make(), k, max_new, GREEDY, should_stop=should_stop)
                n += 1
                try:
                    read = spec_math.read_run(plain, run)
                except ValueError:
                    continue
                found.result.append(SpecRead(label, read, spec_math.best_k(read.alpha, read.c)))
                if should_stop():
                    return False
        return True
    return work


def spec_rows(reads: list[SpecRead]) -> list[dict]:
    """Predicted beside measured, one row per prompt and draft."""
    return [{"prompt": r.prompt, "draft": r.read.draft, "k": r.read.k, "rounds": r.read.rounds,
             "rounds with all k guesses": r.read.full_rounds,
             "kept / tested": f"{r.read.accepted} / {r.read.tested}", "α = kept ÷ tested": round(r.read.alpha, 3),
             "kept ÷ drafted (draft acceptance rate)": round(r.read.draft_acceptance_rate, 3),
             "tokens per round, predicted": round(r.read.predicted_tokens, 2),
             "tokens per round, measured": round(r.read.tokens_per_round, 2), "c": round(r.read.c, 3),
             "verify ÷ decode step (v)": round(r.read.verify, 2),
             "speed-up, predicted E/(kc+1)": round(r.read.predicted_speedup, 2),
             "speed-up, predicted E/(kc+v)": round(r.read.predicted_with_verify, 2),
             "speed-up, measured": round(r.read.speedup, 2), "best k": r.best.k} for r in reads]


# ---------------------------------------------------------------- 2 · prefix caching
@dataclass(frozen=True)
class PrefixDemo:
    tabs: int
    prompt_len: int
    plain_ms: float  # every tab's own prefill
    cached_ms: float  # one prefill, then a copy per tab
    identical: bool  # every tab's logits equal the fresh prefill's, bit for bit
    held: int  # bytes the store holds for this prompt (0: its prefill was larger than the budget)
    max_diff: float
    hits: int  # tabs that started from a copy out of the demonstration's store
    misses: int  # tabs whose lookup found nothing, so they ran a prefill
    budget: int  # the demonstration store's bytes


def demo_prompt_ids(bundle, session) -> list[int]:
    """The learner's prompt (the step page's session), or a default one before there is any."""
    return list(session.prompt_ids) if session is not None else encode_prompt(bundle, text.PREFIX_DEFAULT, False)


def prefix_work(bundle, ids: list[int], tabs: int, on_progress: Progress):
    """``tabs`` fresh sessions' prefills without a cache, then with a cache of the demonstration's own."""
    if not 1 <= tabs <= MAX_TABS:
        raise ValueError(f"Open 1 to {MAX_TABS} tabs; got {tabs}.")

    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
        plain_ms, fresh = 0.0, []
        for i in range(tabs):
            on_progress(i / (2 * tabs), f"tab {i + 1} of {tabs}: its own prefill")
            t0 = time.perf_counter()
            cache_logits = _plain_prefill(bundle, ids)
            plain_ms += (time.perf_counter() - t0) * 1000.0
            fresh.append(cache_logits)
            if should_stop():
                return False
        store, cached_ms, diff = prefix_cache.PrefixCache(settings.current().prefix_cache_bytes or 2**26), 0.0, 0.0
        for i in range(tabs):
            on_progress((tabs + i) / (2 * tabs), f"tab {i + 1} of {tabs}: through the cache")
            t0 = time.perf_counter()
            logits = _cached_prefill(bundle, ids, store)
            cached_ms += (time.perf_counter() - t0) * 1000.0
            diff = max(diff, float((logits - fresh[0]).abs().max()))
        stats = store.stats()
        found.result = PrefixDemo(tabs, len(ids), plain_ms, cached_ms, diff == 0.0, stats.bytes, diff, stats.hits,
                                  stats.misses, stats.budget)
        return True
    return work


def _plain_prefill(bundle, ids: list[int]) -> torch.Tensor:
    return decode.forward(bundle, ids, decode.new_cache(bundle)).logits[0]


def _cached_prefill(bundle, ids: list[int], store: prefix_cache.PrefixCache) -> torch.Tensor:
    hit = store.lookup(bundle, ids)
    if hit is not None:
        return hit.logits
    cache = decode.new_cache(bundle)
    fwd = decode.forward(bundle, ids, cache)
    store.store(bundle, ids, cache, fwd.logits[0], fwd.ms)
    return fwd.logits[0]


def stats_values() -> tuple[tuple[str, ...], str]:
    """The server's counters as the page words them, and the line about its budget."""
    s = prefix_cache.shared().stats()
    return text.prefix_stats(s.hits, s.misses, s.saved_ms, s.bytes), text.prefix_budget(s.budget, s.entries)


def same_prefill(bundle, ids: list[int]) -> float:
    """Largest |difference| between a hit's logits and a fresh prefill's, on a store of its own."""
    store = prefix_cache.PrefixCache(2**30)
    _cached_prefill(bundle, ids, store)  # a miss: this prefill is stored
    hit = store.lookup(bundle, ids)
    return float((hit.logits - _plain_prefill(bundle, ids)).abs().max())


# ---------------------------------------------------------------- 3 · constrained decoding
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 16},
                                           "age": {"type": "integer", "minimum": 0, "maximum": 150}},
          "required": ["name", "age"], "additionalProperties": False}
DEFAULTS = {  # kind → (the grammar as the learner edits it, the prompt)
    grammar.JSON_SCHEMA: (json.dumps(SCHEMA, indent=1), "Describe a person called Ada who is 36, as JSON with her "
                          "name and age."),
    grammar.REGEX: (r"\d{3}-\d{4}", "Invent a phone number in the form 555-0123."),
    grammar.CHOICE: ("positive\nnegative\nneutral", "Is this review positive or negative? 'I loved the film.'"),
}


def parse_source(kind: str, source: str):
    """The learner's text as the grammar's source: a schema dict, a regex, or a list of lines."""
    if kind == grammar.JSON_SCHEMA:
        try:
            return json.loads(source)
        except json.JSONDecodeError as exc:
            raise ValueError(f"The schema is not JSON: {exc}") from exc
    if kind == grammar.CHOICE:
        return [line.strip() for line in source.splitlines() if line.strip()]
    return source


def check_valid(kind: str, source, answer: str) -> tuple[bool, str]:
    """Parse ``answer`` with tools that are not the grammar's: json + jsonschema, re.fullmatch, list membership."""
    if kind == grammar.JSON_SCHEMA:
        try:
            jsonschema.validate(json.loads(answer), source)
        except (json.JSONDecodeError, jsonschema.ValidationError) as exc:
            return False, str(exc).splitlines()[0]
        return True, "json.loads parses it and jsonschema validates it"
    if kind == grammar.REGEX:
        ok = re.fullmatch(source, answer) is not None
        return ok, f"re.fullmatch {'matches' if ok else 'does not match'} the whole text"
    ok = answer in source
    return ok, "it is one of the choices" if ok else "it is none of the choices"


@dataclass(frozen=True)
class GrammarRun:
    kind: str
    source: object
    constrained: grammar.Constrained
    free: grammar.Constrained


def grammar_work(bundle, kind: str, source, prompt: str, max_new: int, on_progress: Progress):
    def work(found: Measured, should_stop: Callable[[], bool]) -> bool:
        ids = encode_prompt(bundle, prompt, bundle.has_chat_template)
        on_progress(0.0, f"with the {kind}")
        constrained = grammar.generate(bundle, ids, kind, source, max_new, should_stop=should_stop)
        on_progress(0.5, "without a grammar")
        free = grammar.generate(bundle, ids, None, None, max_new, should_stop=should_stop)
        found.result = GrammarRun(kind, source, constrained, free)
        return not should_stop()
    return work


def answer_text(bundle, run: grammar.Constrained) -> str:
    return bundle.tokenizer.decode(run.text_ids)


def step_rows(bundle, run: grammar.Constrained) -> list[dict]:
    views = token_views(bundle.tokenizer, run.tokens)
    return [{"step": i, "token": v.label, "allowed tokens": s.allowed, "probability removed": f"{s.removed_mass:.1%}",
             "model's favourite allowed": s.top_allowed} for i, (v, s) in enumerate(zip(views, run.steps), start=1)]


def summary(run: grammar.Constrained) -> tuple[int, float, float, int]:
    """(steps, mean allowed, most probability removed, the step where it was)."""
    steps = run.steps
    worst = max(range(len(steps)), key=lambda i: steps[i].removed_mass) if steps else 0
    mean = sum(s.allowed for s in steps) / len(steps) if steps else 0.0
    return len(steps), mean, steps[worst].removed_mass if steps else 0.0, worst + 1
