"""The "Inside generation" page's controller: its prompts, its kept results, the prefill sweep's run/stop.

Measurements run behind buttons and are kept in the tab's state with a stamp saying what they were
measured on (model, prompt, settings); the page shows a kept result only while its stamp still
matches, so a new prompt or model never shows stale numbers. Functions that keep something take the
state as a mapping (``st.session_state`` on the page, a dict in tests). Nothing here draws: the page (``page``)
puts the buttons, their spinners and the results on the screen.
"""
from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from functools import lru_cache

import torch

from autoreg_core import SessionError
from autoreg_core.engine.tokens import sequence_text, single_token_view
from autoreg_core.experiments import toy_model as toy
from autoreg_core.experiments.prefill_decode import GreedyRun, PrefillPoint, WorkedCounts, prefill_sweep
from autoreg_core.experiments.sliding_window import WindowComparison, first_difference
from autoreg_core.experiments.teacher_forcing import (
    TeacherForced,
    first_forced_step,
    own_continuation,
    stepped_forward_ms,
    teacher_forced,
)
from autoreg_core.experiments.unembedding import Unembedding
from autoreg_ui import keys as site_keys
from autoreg_ui import measuring
from autoreg_ui.app_files import app_folder
from autoreg_ui.format import human_bytes, human_count, ms, ratio
from autoreg_ui.lessons.inside import keys, text
from autoreg_ui.lessons.inside.text import WORKED_PROMPT

Metric = tuple[str, str, str]  # label, value, what it means

LONG_PROMPT_PATH = app_folder() / "assets" / "long_prompt.txt"
LONG_PROMPT_SOURCE = "the opening of Jane Austen's *Pride and Prejudice* (1813, public domain)"
TAB_PROMPT, LONG_PROMPT = "this tab's prompt", "a long example prompt"
PROMPT_CHOICES = (LONG_PROMPT, TAB_PROMPT)
MAX_NEW = 128  # new tokens a measurement on this page may ask for
BRANCH_MAX = 64  # tokens of the model's own branch after a forced token
DIVERGES = " ▌"  # marks where two texts part


@lru_cache(maxsize=1)
def long_prompt_text() -> str:
    return LONG_PROMPT_PATH.read_text(encoding="utf-8").strip()


def measurement_prompt(bundle, session, choice: str, room: int) -> list[int]:
    """The tab's prompt or the long example as ids, cut so ``room`` more positions still fit the model."""
    ids = session.prompt_ids if choice == TAB_PROMPT else bundle.tokenizer(long_prompt_text())["input_ids"]
    return [int(i) for i in ids[:max(1, bundle.spec.max_positions - room)]]


def prompt_caption(prompt_ids: list[int], choice: str) -> str:
    source = f", from {LONG_PROMPT_SOURCE}." if choice == LONG_PROMPT else "."
    return f"{len(prompt_ids)} prompt tokens{source}"


def worked_prompt(bundle) -> list[int]:
    """The first ``WORKED_PROMPT`` tokens of the long example."""
    return [int(i) for i in bundle.tokenizer(long_prompt_text())["input_ids"][:WORKED_PROMPT]]


# ---------------------------------------------------------------- kept results
def compute_and_keep(state: MutableMapping, job: site_keys.JobKeys, measured_on: tuple,
                     compute: Callable[[], object]) -> None:
    """Run ``compute()`` and keep its result with its stamp."""
    measuring.keep(state, job.kept, measuring.Kept(measured_on, compute()))


def kept_result(state: MutableMapping, job: site_keys.JobKeys, measured_on: tuple):
    """The job's result if it was measured on ``measured_on`` (computed now or earlier), else None."""
    found = measuring.kept(state, job.kept, measured_on)
    return None if found is None else found.result


def clamp(state: MutableMapping, key: str, low: int, high: int, default: int) -> None:
    """Keep a number widget's kept value inside bounds that moved (a reset shortens the text)."""
    value = state.get(key, default)
    state[key] = min(max(int(value), low), high)


# ---------------------------------------------------------------- training vs generation, exposure bias
def rank_token(session, config, rank: int) -> int:
    """The id the model ranks ``rank``-th for the next position (its own softmax, before any filter)."""
    probs = session.next_pipeline(config).raw_probs
    if not 1 <= rank <= probs.shape[-1]:
        raise SessionError(f"Rank {rank} is outside the vocabulary (1–{probs.shape[-1]}).")
    return int(torch.topk(probs, k=rank).indices[rank - 1])


def force_rank() -> None:
    """Button callback: append the token the rank widget names instead of the model's choice."""
    import streamlit as st

    from autoreg_ui import controls, messages
    from autoreg_ui.state import current_config, session_or_start

    session = session_or_start()
    if session is None:
        return
    try:
        token = rank_token(session, current_config(), int(st.session_state[keys.INSIDE_FORCE_RANK]))
    except SessionError as exc:
        messages.say(str(exc))
        return
    controls.force(token)


def teacher_rows(tokenizer, records, scored: TeacherForced) -> list[dict]:
    """One row per scored step: the recorded log-prob next to the one-pass log-prob and the model's guess."""
    rows = []
    for record, logprob, top in zip(records, scored.logprobs, scored.top_ids):
        rows.append({"step": record.index, "token": single_token_view(tokenizer, record.token_id).label,
                     "forced": record.forced, "log-prob, step by step": round(record.logprob, 5),
                     "log-prob, one pass": round(logprob, 5),
                     "model's own guess": single_token_view(tokenizer, top).label})
    return rows


def teacher_numbers(session, scored: TeacherForced) -> list[Metric]:
    records = session.records[:len(scored.logprobs)]
    gap = max(abs(one - rec.logprob) for one, rec in zip(scored.logprobs, records))
    return [(f"One pass over {len(scored.ids)} tokens", ms(scored.ms), "Teacher forcing: every position at once."),
            (f"Prefill + {len(records) - 1} decode passes", ms(stepped_forward_ms(session)),
             "The passes whose logits the recorded log-probs came from, one after the other."),
            ("Largest difference", f"{gap:.1e} nats", text.LARGEST_GAP_HELP)]


@dataclass
class Branch:
    """The text after the first forced token, and what the model would have written there itself."""

    step: int  # the first forced step
    actual: list[int]  # the session's tokens from that step on (the forced one first)
    own: list[int]  # greedy, from the same prefix, as many tokens (at most BRANCH_MAX)


def exposure_branch(bundle, session) -> Branch | None:
    """None when no token was forced."""
    step = first_forced_step(session.records)
    if step is None:
        return None
    position = session.prompt_len + step - 1
    actual = session.ids[position:position + BRANCH_MAX]
    return Branch(step, actual, own_continuation(bundle, session.ids, position, len(actual)))


def read_in_one_pass(bundle, session) -> tuple[TeacherForced, Branch | None]:
    """The text scored by teacher forcing, and the model's own branch at the first forced token."""
    return teacher_forced(bundle, session.ids, session.prompt_len), exposure_branch(bundle, session)


def marked_text(tokenizer, ids: list[int], at: int | None) -> str:
    """The text of ``ids`` with a mark where it parts from the other text (``at``: a token index)."""
    if at is None:
        return sequence_text(tokenizer, ids)
    return sequence_text(tokenizer, ids[:at]) + DIVERGES + sequence_text(tokenizer, ids[at:])


def side_by_side(tokenizer, first: list[int], second: list[int]) -> tuple[str, str]:
    """Two continuations as text, each marked where it parts from the other."""
    at = first_difference(first, second)
    return marked_text(tokenizer, first, at), marked_text(tokenizer, second, at)


# ---------------------------------------------------------------- the logit lens
def lens_target(session, step: int) -> tuple[list[int], int | None]:
    """The context a step chose from and the token it chose; past the last step, the next position."""
    if 1 <= step <= len(session.records):
        record = session.records[step - 1]
        return session.ids[:record.context_len], record.token_id
    return list(session.ids), None


# ---------------------------------------------------------------- prefill vs decode
def phase_numbers(run: GreedyRun) -> list[Metric]:
    n = len(run.generated_ids)
    return [("Time to first token", ms(run.first_token_ms),
             f"No queue here: the prefill of {run.prompt_len} tokens, then one choice."),
            ("Tokens per second", f"{run.decode_tokens_per_second:.1f}",
             f"After the first: {n - 1} tokens, one decode pass each."),
            ("Prefill, per prompt token", f"{run.prefill_ms_per_token:.2f} ms", "The prefill pass ÷ prompt tokens."),
            ("Decode, per token", f"{run.decode_ms_median:.1f} ms", "Median decode step (pass + choice)."),
            ("Decode ÷ prefill per token", ratio(run.decode_over_prefill),
             "How many prompt tokens the prefill reads in the time of one decode step.")]


def worked_rows(counts: WorkedCounts) -> list[dict]:
    return [{"what is counted": "positions pushed through the model", "naive": human_count(counts.naive_positions),
             "KV cache": human_count(counts.cached_positions),
             "naive ÷ cached": ratio(counts.naive_positions / counts.cached_positions)},
            {"what is counted": "attention dot products (QKᵀ, all layers and heads)",
             "naive": human_count(counts.naive_dot_products), "KV cache": human_count(counts.cached_dot_products),
             "naive ÷ cached": ratio(counts.naive_dot_products / counts.cached_dot_products)}]


# ---------------------------------------------------------------- the sliding window
def own_windows(config) -> list[int | None]:
    """Each layer's own sliding window as transformers builds the model's cache (None: it keeps every position)."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicSlidingWindowLayer

    return [int(layer.sliding_window) if isinstance(layer, DynamicSlidingWindowLayer) else None
            for layer in DynamicCache(config=config).layers]


def widest(windows: list[int | None]) -> int | None:
    """The model's own sliding window (the widest, if layers differ); None when every layer keeps every position."""
    return max((w for w in windows if w is not None), default=None)


def window_numbers(compared: WindowComparison, own_window: int | None = None) -> list[Metric]:
    """``own_window``: the model's own sliding window (its own cache is then not a full one)."""
    at = compared.diverges_at
    full, windowed = compared.full, compared.windowed
    own = "Full cache at the end" if own_window is None else "The model's own cache at the end"
    return [("Texts part at token", "never" if at is None else f"{at + 1}", "Counting the generated tokens from 1."),
            (own, human_bytes(full.cache_bytes[-1]), f"{full.cache_positions[-1]} positions"),
            ("Window cache at the end", human_bytes(windowed.cache_bytes[-1]),
             f"{windowed.cache_positions[-1]} positions, never more than W − 1 = {compared.window - 1}")]


# ---------------------------------------------------------------- the prefill sweep: run, stop, keep
@dataclass
class Sweep(measuring.Kept):
    """A prefill sweep (stamped like every kept result); points land here as they are measured, so an
    interrupted run keeps them."""

    lengths: list[int] = field(default_factory=list)
    points: list[PrefillPoint] = field(default_factory=list)
    running: bool = True
    stopped: bool = False  # ended before its last length (Stop, or another click)


def sweep_start(state: MutableMapping, measured_on: tuple, lengths: list[int]) -> Sweep:
    sweep = Sweep(stamp=measured_on, lengths=list(lengths))
    state[keys.INSIDE_SWEEP.kept] = sweep
    return sweep


def sweep_add(sweep: Sweep, point: PrefillPoint) -> float:
    """Keep a measured point; returns the fraction of the planned lengths done."""
    sweep.points.append(point)
    return min(1.0, len(sweep.points) / max(1, len(sweep.lengths)))


def sweep_finish(sweep: Sweep) -> None:
    sweep.running = False
    sweep.stopped = len(sweep.points) < len(sweep.lengths)


def run_sweep(state: MutableMapping, bundle, ids: list[int], measured_on: tuple, lengths: list[int],
              progress: Callable[[float, str], None], budget_s: float = measuring.TIME_BUDGET_S) -> Sweep:
    """Measure every length, keeping each point in the state as it arrives; ``progress(fraction, text)``.

    The sweep takes its turn at the server's one measuring gate (waiting, ``progress`` says so). No new
    length is started after ``budget_s`` seconds (a busy machine); what was measured is kept.
    """
    sweep = sweep_start(state, measured_on, lengths)
    with measuring.turn("the prefill vs decode sweep", lambda text: progress(0.0, text)):
        deadline = time.perf_counter() + budget_s
        prefill_sweep(bundle, ids, lengths, should_stop=lambda: time.perf_counter() > deadline,
                      on_point=lambda point: progress(sweep_add(sweep, point), f"L = {point.length} measured"))
    sweep_finish(sweep)
    return sweep


def sweep_settle(state: MutableMapping) -> None:
    """At the top of a script run: a sweep still marked running was interrupted; keep it as stopped."""
    sweep = state.get(keys.INSIDE_SWEEP.kept)
    if isinstance(sweep, Sweep) and sweep.running:
        sweep_finish(sweep)


def sweep_of(state: MutableMapping, measured_on: tuple) -> Sweep | None:
    return measuring.kept(state, keys.INSIDE_SWEEP.kept, measured_on, kind=Sweep)


# ---------------------------------------------------------------- 5 · a toy model, 6 · W·h + b
def toy_score_rows() -> list[dict]:
    """The toy's score table, one row per previous token."""
    return [{"previous token": prev, **{f"→ {nxt}": float(toy.SCORES[i, j]) for j, nxt in enumerate(toy.VOCAB)}}
            for i, prev in enumerate(toy.VOCAB[:-1])]


def toy_rows(steps: list[toy.ToyStep]) -> list[dict]:
    """One row per pass of the toy loop: the context read, each token's score and probability, the pick."""
    rows = []
    for s in steps:
        row = {"step": s.step, "context": " ".join(toy.VOCAB[i] for i in s.context)}
        row |= {f"score {w}": round(v, 2) for w, v in zip(toy.VOCAB, s.logits)}
        row |= {f"p({w})": round(p, 3) for w, p in zip(toy.VOCAB, s.probs)}
        rows.append(row | {"pick": toy.VOCAB[s.pick]})
    return rows


def unembed_rows(tokenizer, u: Unembedding) -> list[dict]:
    """The top tokens' logits taken apart: |W_t|, |h|, cos θ and their product."""
    return [{"token": single_token_view(tokenizer, t.token_id).label, "id": t.token_id,
             "model's logit": round(t.logit, 4), "W_t · h + b_t": round(t.dot, 4), "|W_t|": round(t.row_norm, 3),
             "|h|": round(u.hidden_norm, 3), "cos θ": round(t.cosine, 4), "b_t": round(t.bias, 4)}
            for t in u.top]
