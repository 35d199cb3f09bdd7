"""The inside-generation page's predict-then-check questions: teacher forcing, the logit lens, prefill vs decode."""
from __future__ import annotations

from autoreg_core.engine.kv_cache import solo_phase_times
from autoreg_core.experiments.logit_lens import logit_lens
from autoreg_core.experiments.teacher_forcing import MAX_TOKENS, teacher_forced
from autoreg_core.experiments.training_loss import shared_pass_steps
from autoreg_ui.lessons.inside import text
from autoreg_ui.predict import Checked, Live, Question, answer, token_label


def _generated(live: Live) -> int:
    return len(live.session.records) if live.session is not None else 0


def inside_passes(live: Live) -> Checked:
    s = live.session
    if not s.records:
        raise ValueError(text.NOTHING_TO_SCORE)
    if s.prompt_len >= MAX_TOKENS:
        raise ValueError(text.PROMPT_FILLS_PASS.format(n=MAX_TOKENS))
    read = teacher_forced(live.bundle, s.ids, s.prompt_len)
    records = s.records[:len(read.logprobs)]
    gap = max(abs(a - r.logprob) for a, r in zip(read.logprobs, records))
    return Checked(0, answer(text.INSIDE_PASSES, ms=read.ms, gap=gap,
                             read=text.passes_read(len(read.ids), len(s.ids), len(read.logprobs)),
                             why=text.passes_why(gap, shared_pass_steps(records))))


def inside_phases(live: Live) -> Checked:
    s = live.session
    if not s.records or s.prefill_record is None:
        raise ValueError(text.NO_DECODE_STEP)
    times = solo_phase_times(s)  # the Attention page's rule: a step whose pass carried other tabs' rows is left out
    if times is None:
        raise ValueError(text.NO_SOLO_STEP)
    prefill, decode = times.prefill_ms, times.decode_ms_median
    right = 2 if max(prefill, decode) <= 1.25 * min(prefill, decode) else (0 if prefill > decode else 1)
    per_token = (text.PROMPT_TOKEN_CHEAPER.format(ratio=times.ratio) if times.ratio >= 1
                 else text.PROMPT_TOKEN_DEARER.format(ratio=1 / times.ratio))
    timed = text.PREFILL_TIMED[int(s.prefill_record.copied)]
    return Checked(right, answer(text.INSIDE_PHASES, timed=timed, prompt=times.prefill_tokens, prefill=prefill,
                                 decode=decode,
                                 per_token=times.prefill_ms_per_token, steps=times.decode_steps,
                                 left_out=text.phases_left_out(len(s.records) - times.decode_steps),
                                 per_token_reading=per_token))


def lens_target(session) -> int | None:
    """The model's own top token at the last step (its argmax, whatever was chosen), None before a step."""
    return int(session.records[-1].top_ids[0]) if session is not None and session.records else None


def _lens_fill(live: Live) -> dict:
    target = lens_target(live.session)
    label = token_label(live, target) if target is not None else "…"
    return {"label": label, "layers": live.bundle.spec.n_layers}


def lens_choice(first: int | None, layers: int) -> int:
    """The right choice for the entry where the target is first ranked top (0 = embedding, i = after layer i)."""
    if first is None or first >= layers:  # top only after the last layer, or never: "never before the end"
        return 3
    return text.lens_third(first, layers)


def inside_lens(live: Live) -> Checked:
    s = live.session
    if not s.records:
        raise ValueError(text.NOTHING_TO_LENS)
    reading = logit_lens(live.bundle, list(s.ids[:s.records[-1].context_len]), lens_target(s))
    layers = live.bundle.spec.n_layers
    first = reading.first_top
    return Checked(lens_choice(first, layers), answer(text.INSIDE_LENS, sentence=text.lens_answer(
        first, reading.settles_at, layers, reading.target_ranks[-1])))


QUESTIONS: tuple[Question, ...] = (
    Question("passes", text.INSIDE_PASSES, inside_passes,
             fill=lambda live: {"n": _generated(live), "n_plus": _generated(live) + 1}),
    Question("lens", text.INSIDE_LENS, inside_lens, fill=_lens_fill),
    Question("phases", text.INSIDE_PHASES, inside_phases,
             fill=lambda live: {"prompt": live.session.prompt_len if live.session is not None else 0}),
)
