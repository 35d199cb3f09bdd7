"""Predict, then check: a few questions per page, each answered only after the learner has chosen.

Every answer is computed when asked, from the live session (the model's own distribution, a teacher-forced
pass, the logit lens, the tokenizer) or from the engine's arithmetic (``ModelSpec``), never typed in.
A question is three parts: ``prompt`` fills the question from cheap live values, ``check`` runs the
check and returns which choice was right with the answer, and the text lives in ``predict_text``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
import torch

from autoreg_core import attention_view as av
from autoreg_core.batching import step_budget
from autoreg_core.cache import PhaseTimes
from autoreg_core.config import SamplingConfig
from autoreg_core.decode import entropy_bits, process
from autoreg_core.lens import logit_lens
from autoreg_core.teacher import teacher_forced
from autoreg_core.tokens import script_count, single_token_view, token_views
from autoreg_ui import messages
from autoreg_ui import predict_text as text
from autoreg_ui.format import human_bytes, human_count
from autoreg_ui.lessons.cost.controller import attention_share
from autoreg_ui.lessons.tokens.text import SAMPLES


@dataclass(frozen=True)
class Live:
    """What a check may read: the loaded model, this tab's session (None before a prompt) and its settings."""
    bundle: object
    session: object | None
    config: SamplingConfig


@dataclass(frozen=True)
class Checked:
    right: int  # index of the right choice
    answer: str  # Markdown, model text escaped


@dataclass(frozen=True)
class Question:
    key: str
    words: tuple[str, tuple[str, ...], str]  # (ask, choices, answer template) from predict_text
    check: Callable[[Live], Checked]
    fill: Callable[[Live], dict] = lambda live: {}  # cheap values the question itself shows
    needs_session: bool = True

    def ask(self, live: Live) -> tuple[str, tuple[str, ...]]:
        values = self.fill(live)
        ask, choices, _ = self.words
        return ask.format(**values), tuple(c.format(**values) for c in choices)


def bucket(value: float, edges: tuple[float, ...]) -> int:
    """Which of len(edges) + 1 ranges holds ``value`` (ranges are closed on the right: ≤ edge)."""
    return sum(value > edge for edge in edges)


def _label(live: Live, token_id: int) -> str:
    return messages.plain(single_token_view(live.bundle.tokenizer, int(token_id)).label)


def _answer(words, **values) -> str:
    return words[2].format(**values)


# ---------------------------------------------------------------- step
def step_top(live: Live) -> Checked:
    probs = live.session.next_pipeline(live.config).raw_probs
    top = torch.topk(probs, 2)
    p, p2 = float(top.values[0]), float(top.values[1])
    return Checked(0 if p > 0.5 else 1, _answer(text.STEP_TOP, label=_label(live, top.indices[0]), p=p, p2=p2))


def step_logprob(live: Live) -> Checked:
    p = float(live.session.next_pipeline(live.config).raw_probs.max())
    now = live.session.sequence_logprob()
    return Checked(1, _answer(text.STEP_LOGPROB, now=now, p=p, best=float(torch.tensor(p).log())))


def step_entropy(live: Live) -> Checked:
    bits = entropy_bits(live.session.next_pipeline(live.config).raw_probs)
    return Checked(bucket(bits, (1, 4)), _answer(text.STEP_ENTROPY, bits=bits, even=2 ** bits))


# ---------------------------------------------------------------- sampling
def _raw_logits(live: Live) -> torch.Tensor:
    return live.session.next_pipeline(SamplingConfig()).stages[0].scores


def sampling_temperature(live: Live) -> Checked:
    logits, ids = _raw_logits(live), live.session.ids
    p1 = float(process(logits, ids, SamplingConfig(temperature=1.0)).probs.max())
    p05 = float(process(logits, ids, SamplingConfig(temperature=0.5)).probs.max())
    right = 2 if abs(p05 - p1) < 5e-4 else (0 if p05 > p1 else 1)
    return Checked(right, _answer(text.SAMPLING_TEMPERATURE, p1=p1, p05=p05))


def sampling_top_p(live: Live) -> Checked:
    pipe = process(_raw_logits(live), live.session.ids, SamplingConfig(top_p=0.9))
    kept_mask = pipe.probs > 0
    kept = int(kept_mask.sum())
    mass = float(pipe.raw_probs[kept_mask].sum())
    return Checked(bucket(kept, (1, 10, 100)), _answer(text.SAMPLING_TOP_P, kept=kept, mass=mass))


def sampling_top_k(live: Live) -> Checked:
    logits, ids = _raw_logits(live), live.session.ids
    pipe = process(logits, ids, SamplingConfig(top_k=5))
    p_raw, p_k = float(pipe.raw_probs.max()), float(pipe.probs.max())
    mass = float(pipe.raw_probs[pipe.probs > 0].sum())
    right = 0 if p_k > p_raw + 5e-4 else (1 if p_k >= p_raw - 5e-4 else 2)
    return Checked(right, _answer(text.SAMPLING_TOP_K, p_raw=p_raw, p_k=p_k, mass=mass))


# ---------------------------------------------------------------- attention and the cache
def _newest_keys(session) -> tuple[int, int] | None:
    """(position, keys its query scored) of the newest token fed in, read from its captured attention row
    (its own length, not the cache's), or None when that row was not captured."""
    if session.records:
        rec = session.records[-1]
        return None if rec.attention is None else (rec.cache_len - 1, int(rec.attention.shape[-1]))
    pre = session.prefill_record
    return None if pre is None or pre.attention is None else (pre.n_tokens - 1, int(pre.attention.shape[-1]))


def _newest_fill(live: Live) -> dict:
    pos = max(0, live.session.cache_len - 1) if live.session is not None else 0
    return {"pos": pos, "pos_plus": pos + 1}


def attention_keys(live: Live) -> Checked:
    read = _newest_keys(live.session)
    if read is None:
        raise ValueError(text.NOT_CAPTURED)
    pos, keys = read
    choices = (pos, pos + 1, 1)
    if keys not in choices:
        raise ValueError(text.NONE_OF_THE_CHOICES.format(keys=keys))
    return Checked(choices.index(keys), _answer(text.ATTENTION_KEYS, keys=keys, pos=pos, pos_plus=pos + 1))


def _focus_layer(live: Live) -> int:
    return live.bundle.spec.n_layers // 2


def attention_focus(live: Live) -> Checked:
    newest = av.latest_row(live.session)
    if newest is None or newest[1] is None:
        raise ValueError(text.NOT_CAPTURED)
    layer = _focus_layer(live)
    weights = av.select_heads(newest[1], layer, None)
    pos = int(weights.argmax())
    top, first = float(weights[pos]), float(weights[0])
    reading = text.FOCUS_ON_FIRST if pos == 0 else text.FOCUS_ELSEWHERE
    return Checked(0 if top > 0.5 else 1, _answer(text.ATTENTION_FOCUS, layer=layer, top=top, pos=pos, first=first,
                                                   label=_label(live, live.session.ids[pos]), reading=reading))


def attention_growth(live: Live) -> Checked:
    spec = live.bundle.spec
    per = spec.cache_bytes_per_position
    return Checked(bucket(per, (10 * 1024, 100 * 1024, 1024 ** 2)),
                   _answer(text.ATTENTION_GROWTH, per_token=human_bytes(per), layers=spec.n_layers,
                           kv_heads=spec.n_kv_heads, head_dim=spec.head_dim, bytes=spec.cache_bytes_per_element,
                           at_2048=human_bytes(spec.cache_bytes(2048))))


# ---------------------------------------------------------------- cost
COST_LENGTH = 1024


def cost_flops(live: Live) -> Checked:
    spec = live.bundle.spec
    naive, cached = spec.flops_step(COST_LENGTH, cached=False), spec.flops_step(COST_LENGTH, cached=True)
    ratio = naive / cached
    return Checked(bucket(ratio, (2, 20, 200)), _answer(text.COST_FLOPS, length=COST_LENGTH, ratio=ratio,
                                                        naive=human_count(naive), cached=human_count(cached)))


def cost_growth(live: Live) -> Checked:
    spec = live.bundle.spec
    short, long = spec.flops_step(128, cached=True), spec.flops_step(2048, cached=True)
    growth = long / short - 1
    right = 0 if growth <= 0 else (2 if long >= 16 * short else 1)
    return Checked(right, _answer(text.COST_GROWTH, growth=growth, at_128=human_count(short),
                                  at_2048=human_count(long)))


SHARE_LENGTH = 2048


def cost_share(live: Live) -> Checked:
    spec = live.bundle.spec
    share = attention_share(spec, SHARE_LENGTH)
    total = spec.flops_step(SHARE_LENGTH, cached=True)
    return Checked(bucket(share, (0.1, 0.3, 0.6)),
                   _answer(text.COST_SHARE, share=share, length=SHARE_LENGTH, total=human_count(total),
                           attention=human_count(spec.attention_flops_per_key * SHARE_LENGTH),
                           crossover=spec.attention_equals_layers_at))


# ---------------------------------------------------------------- inside generation
def _generated(live: Live) -> int:
    return len(live.session.records) if live.session is not None else 0


def inside_passes(live: Live) -> Checked:
    s = live.session
    if not s.records:
        raise ValueError(text.NOTHING_TO_SCORE)
    read = teacher_forced(live.bundle, s.ids, s.prompt_len)
    stepped = [r.logprob for r in s.records][:len(read.logprobs)]
    gap = max(abs(a - b) for a, b in zip(read.logprobs, stepped))
    return Checked(0, _answer(text.INSIDE_PASSES, ms=read.ms, gap=gap))


def inside_phases(live: Live) -> Checked:
    s = live.session
    if not s.records or s.prefill_record is None:
        raise ValueError(text.NO_DECODE_STEP)
    times = PhaseTimes.measured(s.prefill_record.time_ms, s.prefill_record.n_tokens, [r.forward_ms for r in s.records])
    prefill, decode = times.prefill_ms, times.decode_ms_median
    right = 2 if max(prefill, decode) <= 1.25 * min(prefill, decode) else (0 if prefill > decode else 1)
    per_token = (text.PROMPT_TOKEN_CHEAPER.format(ratio=times.ratio) if times.ratio >= 1
                 else text.PROMPT_TOKEN_DEARER.format(ratio=1 / times.ratio))
    return Checked(right, _answer(text.INSIDE_PHASES, prompt=times.prefill_tokens, prefill=prefill, decode=decode,
                                  per_token=times.prefill_ms_per_token, steps=times.decode_steps,
                                  per_token_reading=per_token))


def _lens_fill(live: Live) -> dict:
    s = live.session
    target = s.records[-1].token_id if s is not None and s.records else None
    label = _label(live, target) if target is not None else "…"
    return {"label": label, "layers": live.bundle.spec.n_layers}


def inside_lens(live: Live) -> Checked:
    s = live.session
    if not s.records:
        raise ValueError(text.NOTHING_TO_LENS)
    ids = list(s.ids)
    reading = logit_lens(live.bundle, ids[:-1], ids[-1])
    layers = live.bundle.spec.n_layers
    first, settles = reading.first_top, reading.settles_at
    if first is None or first >= layers:  # entries: 0 = embedding, i = after layer i
        return Checked(3, _answer(text.INSIDE_LENS, where="the very end", first=layers, layers=layers,
                                  settles=layers, label=_lens_fill(live)["label"], reading=text.LENS_LATE))
    third = min(2, (max(first, 1) - 1) * 3 // layers)
    return Checked(third, _answer(text.INSIDE_LENS, where=text.THIRDS[third], first=first, layers=layers,
                                  settles=settles if settles is not None else layers,
                                  label=_lens_fill(live)["label"],
                                  reading=text.LENS_EARLY if third == 0 else text.LENS_LATE))


# ---------------------------------------------------------------- serving
def serving_batch(live: Live) -> Checked:
    spec = live.bundle.spec
    one, eight = step_budget(spec, 1, 256), step_budget(spec, 8, 256)
    ratio = eight.bytes_read / one.bytes_read
    return Checked(bucket(ratio, (2, 6)), _answer(text.SERVING_BATCH, ratio=ratio, weights=human_bytes(one.weight_bytes),
                                                  cache_1=human_bytes(one.cache_bytes),
                                                  cache_8=human_bytes(eight.cache_bytes)))


def serving_memory(live: Live) -> Checked:
    spec = live.bundle.spec
    weights, caches = spec.weight_bytes, spec.cache_bytes(2048, batch=32)
    reading = (text.WEIGHTS_LARGER.format(times=weights / caches) if weights > caches
               else text.CACHES_LARGER.format(times=caches / weights))
    return Checked(0 if weights > caches else 1,
                   _answer(text.SERVING_MEMORY, weights=human_bytes(weights), caches=human_bytes(caches),
                           per_token=human_bytes(spec.cache_bytes_per_position), reading=reading))


def serving_crossover(live: Live) -> Checked:
    one = step_budget(live.bundle.spec, 1, 256)
    batch = one.weight_bytes // one.cache_bytes + 1  # the first batch whose caches outweigh the weights
    return Checked(bucket(batch, (10, 100, 1000)),
                   _answer(text.SERVING_CROSSOVER, batch=batch, weights=human_bytes(one.weight_bytes),
                           per_sequence=human_bytes(one.cache_bytes)))


# ---------------------------------------------------------------- tokens
def tokens_script(live: Live) -> Checked:
    tok = live.bundle.tokenizer
    en, ta = script_count(tok, "English", SAMPLES["English"]), script_count(tok, "Tamil", SAMPLES["Tamil"])
    right = 2 if abs(en.tokens - ta.tokens) <= 1 else (0 if en.tokens > ta.tokens else 1)
    return Checked(right, _answer(text.TOKENS_SCRIPT, en_tokens=en.tokens, en_chars=en.characters,
                                  ta_tokens=ta.tokens, ta_chars=ta.characters))


def tokens_space(live: Live) -> Checked:
    tok = live.bundle.tokenizer
    plain = tok("Paris", add_special_tokens=False)["input_ids"]
    spaced = tok(" Paris", add_special_tokens=False)["input_ids"]
    ids = lambda seq: " + ".join(str(i) for i in seq)  # noqa: E731
    return Checked(0 if plain == spaced else 1, _answer(text.TOKENS_SPACE, plain_ids=ids(plain), space_ids=ids(spaced),
                                                        reading=text.SPACE_SAME if plain == spaced else text.SPACE_APART))


def tokens_emoji(live: Live) -> Checked:
    tok = live.bundle.tokenizer
    ids = tok("🐈", add_special_tokens=False)["input_ids"]
    pieces = ", ".join(f"“{messages.plain(v.label)}” (id {v.id})" for v in token_views(tok, ids))
    return Checked(bucket(len(ids), (1, 4)), _answer(text.TOKENS_EMOJI, n=len(ids), pieces=pieces,
                                                     reading=text.EMOJI_ONE_PIECE if len(ids) == 1 else text.EMOJI_BYTES))


QUESTIONS: dict[str, tuple[Question, ...]] = {
    "step": (Question("top", text.STEP_TOP, step_top), Question("logprob", text.STEP_LOGPROB, step_logprob),
             Question("entropy", text.STEP_ENTROPY, step_entropy)),
    "sampling": (Question("temperature", text.SAMPLING_TEMPERATURE, sampling_temperature),
                 Question("top_p", text.SAMPLING_TOP_P, sampling_top_p,
                          fill=lambda live: {"vocab": live.bundle.spec.vocab}),
                 Question("top_k", text.SAMPLING_TOP_K, sampling_top_k)),
    "attention": (Question("keys", text.ATTENTION_KEYS, attention_keys, fill=_newest_fill),
                  Question("growth", text.ATTENTION_GROWTH, attention_growth, needs_session=False),
                  Question("focus", text.ATTENTION_FOCUS, attention_focus,
                           fill=lambda live: {"layer": _focus_layer(live)})),
    "cost": (Question("flops", text.COST_FLOPS, cost_flops, fill=lambda live: {"length": COST_LENGTH},
                      needs_session=False),
             Question("growth", text.COST_GROWTH, cost_growth, needs_session=False),
             Question("share", text.COST_SHARE, cost_share, fill=lambda live: {"length": SHARE_LENGTH},
                      needs_session=False)),
    "inside": (Question("passes", text.INSIDE_PASSES, inside_passes,
                        fill=lambda live: {"n": _generated(live), "n_plus": _generated(live) + 1}),
               Question("lens", text.INSIDE_LENS, inside_lens, fill=_lens_fill),
               Question("phases", text.INSIDE_PHASES, inside_phases,
                        fill=lambda live: {"prompt": live.session.prompt_len if live.session is not None else 0})),
    "serving": (Question("batch", text.SERVING_BATCH, serving_batch, needs_session=False),
                Question("memory", text.SERVING_MEMORY, serving_memory, needs_session=False),
                Question("crossover", text.SERVING_CROSSOVER, serving_crossover, needs_session=False)),
    "tokens": (Question("script", text.TOKENS_SCRIPT, tokens_script, needs_session=False),
               Question("space", text.TOKENS_SPACE, tokens_space, needs_session=False),
               Question("emoji", text.TOKENS_EMOJI, tokens_emoji, needs_session=False)),
}


def verdict(question: Question, live: Live, choice: int) -> str:
    """The Markdown shown once a choice is made: right or not, and the computed answer."""
    if question.needs_session and live.session is None:
        return text.NO_SESSION
    try:
        checked = question.check(live)
    except ValueError as error:
        return text.FAILED.format(error=messages.plain(str(error)))
    return f"**{text.CORRECT if choice == checked.right else text.NOT_QUITE}** {checked.answer}"


def show(page: str, live: Live | None = None) -> None:
    """The page's folded questions; a check runs only after its answer is picked (``live``: this tab's by default)."""
    if live is None:
        from autoreg_ui.state import current_bundle, current_config, current_session

        bundle = current_bundle()
        if bundle is None:
            return
        live = Live(bundle, current_session(), current_config())
    with st.expander(text.TITLE, icon=":material/quiz:"):
        st.caption(text.INTRO)
        for question in QUESTIONS[page]:
            ask, choices = question.ask(live)
            picked = st.radio(ask, range(len(choices)), format_func=lambda i, c=choices: c[i], index=None,
                              key=f"predict_{page}_{question.key}")
            if picked is not None:
                st.markdown(verdict(question, live, picked))
