"""The "Under the hood" page's predict-then-check questions, two per section, each answered by the engine now."""
from __future__ import annotations

import math

from autoreg_core.engine.model_spec import dtype_name
from autoreg_core.experiments.batch_invariance import BATCH_SIZES, float_spacing, significant_bits, step_invariance
from autoreg_core.experiments.rope import shifted_step
from autoreg_core.experiments.training_loss import text_loss
from autoreg_ui.lessons.hood import controller as hood
from autoreg_ui.lessons.hood import positions_text, text
from autoreg_ui.lessons.hood.controller import LEARNED, positions_kind
from autoreg_ui.predict import Checked, Live, Question, answer


def parts_choice(prompt: float, generated: float) -> int:
    """0: the prompt's mean is higher, 1: the generated one's, 2: within 10% of each other."""
    if max(prompt, generated) <= 1.1 * min(prompt, generated):
        return 2
    return 0 if prompt > generated else 1


def perplexity_choice(perplexity: float) -> int:
    """0: fewer than 10, 1: 10 to 100, 2: more than 100."""
    return 0 if perplexity < 10 else (1 if perplexity <= 100 else 2)


def diff_choice(delta: float) -> int:
    """0: exactly 0, 1: above 0 but below 0.001, 2: 0.001 or more."""
    return 0 if delta == 0 else (1 if delta < 1e-3 else 2)


def _ids(live: Live) -> list[int]:
    """The last tokens of the text, as many as one pass reads: what the positions section checks."""
    ids = list(live.session.ids)[-hood.MAX_READ:]
    if len(ids) < 2:
        raise ValueError(text.NEED_TOKENS)
    return ids


def _first_ids(live: Live) -> list[int]:
    """The first tokens of the text, as many as one pass reads: what the loss section scores (its prompt first)."""
    ids = list(live.session.ids)[:hood.MAX_READ]
    if len(ids) < 2:
        raise ValueError(text.NEED_TOKENS)
    return ids


def _read(live: Live) -> tuple[int, int]:
    """(tokens one pass reads of this text, tokens in it)."""
    total = len(live.session.ids) if live.session is not None else 0
    return min(total, hood.MAX_READ), total


def _loss_fill(live: Live) -> dict:
    """The prompt's scored tokens (all but its first: nothing comes before it) and the tokens added after it."""
    read, total = _read(live)
    prompt = min(live.session.prompt_len, read) if live.session is not None else 0
    return {"part": text.text_part(read, total, "first"), "prompt": max(0, prompt - 1), "generated": read - prompt}


def loss_parts(live: Live) -> Checked:
    s = live.session
    scored = text_loss(live.bundle, _first_ids(live), s.prompt_len)
    prompt, generated = hood.mean_or_nan(scored.prompt_losses), hood.mean_or_nan(scored.generated_losses)
    if hood.prompt_fills(len(s.ids), scored):
        raise ValueError(text.PROMPT_FILLS_PASS.format(n=len(scored.ids)))
    if math.isnan(prompt):
        raise ValueError(text.ONE_TOKEN_PROMPT)
    if not scored.generated_losses:
        raise ValueError(text.NEED_STEP)
    right = parts_choice(prompt, generated)
    close = text.LOSS_CLOSE if right == 2 else ""
    forced, below = hood.picks(s.records[:len(scored.generated_losses)])
    return Checked(right, answer(text.Q_LOSS_PARTS, sentence=close + text.parts_sentence(
        prompt, generated, len(scored.generated_losses), forced, below)))


def perplexity(live: Live) -> Checked:
    scored = text_loss(live.bundle, _first_ids(live), live.session.prompt_len)
    return Checked(perplexity_choice(scored.perplexity),
                   answer(text.Q_PERPLEXITY, n=len(scored.ids), loss=scored.loss, perplexity=scored.perplexity))


def _position_fill(live: Live) -> dict:
    """The next position: every token of the text is cached, however many one pass reads."""
    n = len(live.session.ids) if live.session is not None else 0
    return {"n": n, "before": n - 1, "after": n + 1}


def _shift_fill(live: Live) -> dict:
    """The whole shift runs on the tokens one pass reads (the last ones)."""
    read, total = _read(live)
    return {"part": text.text_part(read, total, "last"), "n": read, "before": read - 1}


def next_position(live: Live) -> Checked:
    ids = _ids(live)
    shifted = shifted_step(live.bundle, ids)  # its last token sits at len(ids) − 1: the step that made ids
    n = len(live.session.ids)
    check = positions_text.position_check(len(ids), n, shifted.max_delta_last, shifted.kl_last_bits,
                                          shifted.top_changed_last)
    return Checked(1, answer(text.Q_POSITION, n=n, before=n - 1, check=check))


def whole_shift(live: Live) -> Checked:
    shifted = shifted_step(live.bundle, _ids(live))
    dtype = live.bundle.dtype
    words = positions_text.Q_WHOLE_SHIFT_LEARNED if positions_kind(live.bundle.model) == LEARNED else text.Q_WHOLE_SHIFT
    return Checked(diff_choice(shifted.max_delta_all) // 2,  # below 0.001 (or 0) → "hardly at all"
                   answer(words, delta=shifted.max_delta_all, kl=shifted.kl_all_bits,
                          dtype=dtype_name(dtype), bits=significant_bits(dtype)))


def diff_reading(delta: float, dtype, top_logit: float) -> str:
    """What a solo-vs-shared difference says, for a model computing in ``dtype``."""
    right = diff_choice(delta)
    if right < 2:
        return (text.DIFF_ZERO, text.DIFF_SMALL)[right]
    return text.diff_large(dtype_name(dtype), significant_bits(dtype), top_logit, float_spacing(top_logit, dtype),
                           delta)


def _batch_fill(live: Live) -> dict:
    cut = hood.step_cut(live.session) if live.session is not None else 0
    step = "Your last step" if live.session is not None and live.session.records else "The next step"
    return {"which": f"{step}, {text.RECOMPUTED.format(n=cut)}," if cut else step}


def batch_diff(live: Live) -> Checked:
    ids, _ = hood.last_step(live.session)
    found = step_invariance(live.bundle, ids, hood.other_rows(live.bundle))
    delta = found.max_delta
    return Checked(diff_choice(delta), answer(text.Q_BATCH_DIFF, delta=delta, rows=len(found.sizes),
                                              reading=diff_reading(delta, live.bundle.dtype, found.top_logit)))


def _flip_fill(live: Live) -> dict:
    """The question's opening: the recorded gap, which is the measured step's only when its text is not cut."""
    s = live.session
    which = "…" if s is None else text.step_question(bool(s.records), hood.step_cut(s), hood.recorded_gap(s))
    return {"which": which, "sizes": text.sizes_list(BATCH_SIZES)}


def could_flip(live: Live) -> Checked:
    """Yes when a shared pass measured here picked another top token; the bound (a gap within twice the largest
    difference) only says what other companions could do."""
    ids, _ = hood.last_step(live.session)
    found = step_invariance(live.bundle, ids, hood.other_rows(live.bundle))
    sentence = text.flip_sentence(found.gap, found.max_delta, [f.rows for f in found.flipped])
    return Checked(0 if found.flipped else 1,
                   answer(text.Q_FLIP, sentence=text.flip_answer(found.gap, hood.step_cut(live.session), sentence)))


QUESTIONS: tuple[Question, ...] = (
    Question("loss_parts", text.Q_LOSS_PARTS, loss_parts, fill=_loss_fill),
    Question("perplexity", text.Q_PERPLEXITY, perplexity, fill=_loss_fill),
    Question("position", text.Q_POSITION, next_position, fill=_position_fill),
    Question("whole_shift", text.Q_WHOLE_SHIFT, whole_shift, fill=_shift_fill),
    Question("batch_diff", text.Q_BATCH_DIFF, batch_diff, fill=_batch_fill),
    Question("flip", text.Q_FLIP, could_flip, fill=_flip_fill),
)
