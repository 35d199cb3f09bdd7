"""The tricks page's predict-then-check questions, each answered by the engine: the formula of speculation,
the best draft length, a prefix-cache hit against a fresh prefill, its memory, and the grammar mask's counts."""
from __future__ import annotations

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.session import encode_prompt
from autoreg_core.experiments import constrained_decoding as grammar
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.tricks import controller, text
from autoreg_ui.predict import Checked, Live, Question, answer, bucket, token_label

ALPHA, K = 0.8, 4
BEST_ALPHA, BEST_C = 0.7, 0.2
MIB = 2**20


def spec_tokens(live: Live) -> Checked:
    tokens = spec_math.expected_tokens(ALPHA, K)
    right = 3 if tokens >= K + 1 else bucket(tokens, (1.5, 2.5))
    return Checked(right, answer(text.SPEC_TOKENS, alpha=ALPHA, k=K, k_plus=K + 1, tokens=tokens))


def spec_best(live: Live) -> Checked:
    best = spec_math.best_k(BEST_ALPHA, BEST_C)
    adds = best.next_adds
    return Checked(bucket(best.k, (1, 4, 8)), answer(
        text.SPEC_BEST, alpha=BEST_ALPHA, c=BEST_C, k=best.k, speedup=best.speedup, k_next=best.k + 1, adds=adds,
        per_step=adds / BEST_C, after=spec_math.speedup(BEST_ALPHA, best.k + 1, BEST_C),
        contrast=text.SPEC_BEST_MORE if adds > BEST_C else ""))


def prefix_same(live: Live) -> Checked:
    diff = controller.same_prefill(live.bundle, list(live.session.prompt_ids))
    right = 0 if diff == 0.0 else (1 if diff <= 1e-4 else 2)
    return Checked(right, answer(text.PREFIX_SAME, vocab=live.bundle.spec.vocab, diff=diff,
                                 reading=text.PREFIX_SAME_YES if diff == 0.0 else text.PREFIX_SAME_NO))


def prefix_bytes(live: Live) -> Checked:
    spec, n = live.bundle.spec, live.session.prompt_len
    held = spec.cache_bytes(n, 1) + spec.vocab * 4
    return Checked(bucket(held / MIB, (1, 10)), answer(
        text.PREFIX_BYTES, n=n, held=human_bytes(held), layers=spec.n_layers, kv=spec.n_kv_heads,
        dim=spec.head_dim, size=f"{spec.cache_bytes_per_element:g}", vocab=spec.vocab))


def _choices(live: Live) -> list[str]:
    return controller.parse_source(grammar.CHOICE, controller.DEFAULTS[grammar.CHOICE][0])


def grammar_allowed(live: Live) -> Checked:
    ok = grammar.allowed(grammar.matcher(live.bundle, grammar.CHOICE, _choices(live)), live.bundle.spec.vocab)
    count = int(ok.sum())
    return Checked(bucket(count, (3, 30, 1000)), answer(text.GRAMMAR_ALLOWED, choices=", ".join(_choices(live)),
                                                         vocab=live.bundle.spec.vocab, allowed=count))


def grammar_mass(live: Live) -> Checked:
    regex, prompt = controller.DEFAULTS[grammar.REGEX]
    ids = encode_prompt(live.bundle, prompt, live.bundle.has_chat_template)
    logits = decode.forward(live.bundle, ids, decode.new_cache(live.bundle)).logits[0]
    ok = grammar.allowed(grammar.matcher(live.bundle, grammar.REGEX, regex), logits.shape[-1])
    removed = float(decode.softmax(logits)[~ok].sum())
    top = int(torch.argmax(logits))
    right = 0 if removed == 0.0 else 1 + bucket(removed, (0.1, 0.5))
    return Checked(right, answer(text.GRAMMAR_MASS, regex=regex, removed=removed, favourite=token_label(live, top),
                                 allows="allows" if bool(ok[top]) else "does not allow"))


def _grammar_fill(live: Live) -> dict:
    return {"choices": ", ".join(_choices(live)), "vocab": live.bundle.spec.vocab,
            "regex": controller.DEFAULTS[grammar.REGEX][0]}


QUESTIONS: tuple[Question, ...] = (
    Question("spec_tokens", text.SPEC_TOKENS, spec_tokens, fill=lambda live: {"alpha": ALPHA, "k": K, "k_plus": K + 1},
             needs_session=False),
    Question("spec_best", text.SPEC_BEST, spec_best, fill=lambda live: {"alpha": BEST_ALPHA, "c": BEST_C},
             needs_session=False),
    Question("prefix_same", text.PREFIX_SAME, prefix_same),
    Question("prefix_bytes", text.PREFIX_BYTES, prefix_bytes,
             fill=lambda live: {"n": live.session.prompt_len if live.session is not None else "…"}),
    Question("grammar_allowed", text.GRAMMAR_ALLOWED, grammar_allowed, fill=_grammar_fill, needs_session=False),
    Question("grammar_mass", text.GRAMMAR_MASS, grammar_mass, fill=_grammar_fill, needs_session=False),
)
