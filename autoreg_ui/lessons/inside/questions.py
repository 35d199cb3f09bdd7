"""The inside-generation page's predict-then-check questions: teacher forcing, the logit lens, prefill vs decode."""
from __future__ import annotations

from autoreg_core.engine.kv_cache import PhaseTimes
from autoreg_core.experiments.logit_lens import logit_lens
from autoreg_core.experiments.teacher_forcing import teacher_forced
from autoreg_ui.lessons.inside import text
from autoreg_ui.predict import Checked, Live, Question, answer, token_label


def _generated(live: Live) -> int:
    return len(live.session.records) if live.session is not None else 0


def inside_passes(live: Live) -> Checked:
    s = live.session
    if not s.records:
        raise ValueError(text.NOTHING_TO_SCORE)
    read = teacher_forced(live.bundle, s.ids, s.prompt_len)
    stepped = [r.logprob for r in s.records][:len(read.logprobs)]
    gap = max(abs(a - b) for a, b in zip(read.logprobs, stepped))
    return Checked(0, answer(text.INSIDE_PASSES, ms=read.ms, gap=gap))


def inside_phases(live: Live) -> Checked:
    s = live.session
    if not s.records or s.prefill_record is None:
        raise ValueError(text.NO_DECODE_STEP)
    times = PhaseTimes.measured(s.prefill_record.time_ms, s.prefill_record.n_tokens, [r.forward_ms for r in s.records])
    prefill, decode = times.prefill_ms, times.decode_ms_median
    right = 2 if max(prefill, decode) <= 1.25 * min(prefill, decode) else (0 if prefill > decode else 1)
    per_token = (text.PROMPT_TOKEN_CHEAPER.format(ratio=times.ratio) if times.ratio >= 1
                 else text.PROMPT_TOKEN_DEARER.format(ratio=1 / times.ratio))
    return Checked(right, answer(text.INSIDE_PHASES, prompt=times.prefill_tokens, prefill=prefill, decode=decode,
                                 per_token=times.prefill_ms_per_token, steps=times.decode_steps,
                                 per_token_reading=per_token))


def _lens_fill(live: Live) -> dict:
    s = live.session
    target = s.records[-1].token_id if s is not None and s.records else None
    label = token_label(live, target) if target is not None else "…"
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
        return Checked(3, answer(text.INSIDE_LENS, where="the very end", first=layers, layers=layers,
                                 settles=layers, label=_lens_fill(live)["label"], reading=text.LENS_LATE))
    third = min(2, (max(first, 1) - 1) * 3 // layers)
    return Checked(third, answer(text.INSIDE_LENS, where=text.THIRDS[third], first=first, layers=layers,
                                 settles=settles if settles is not None else layers,
                                 label=_lens_fill(live)["label"],
                                 reading=text.LENS_EARLY if third == 0 else text.LENS_LATE))


QUESTIONS: tuple[Question, ...] = (
    Question("passes", text.INSIDE_PASSES, inside_passes,
             fill=lambda live: {"n": _generated(live), "n_plus": _generated(live) + 1}),
    Question("lens", text.INSIDE_LENS, inside_lens, fill=_lens_fill),
    Question("phases", text.INSIDE_PHASES, inside_phases,
             fill=lambda live: {"prompt": live.session.prompt_len if live.session is not None else 0}),
)
