"""The step page's predict-then-check questions: the model's own next distribution, read live."""
from __future__ import annotations

import torch

from autoreg_core.engine.decode import entropy_bits
from autoreg_ui import format
from autoreg_ui.lessons.step import text
from autoreg_ui.predict import Checked, Live, Question, answer, bucket, token_label


def step_top(live: Live) -> Checked:
    probs = live.session.next_pipeline(live.config).raw_probs
    top = torch.topk(probs, 2)
    p, p2 = float(top.values[0]), float(top.values[1])
    return Checked(0 if p > 0.5 else 1, answer(text.STEP_TOP, label=token_label(live, top.indices[0]),
                                               p=_top_said(p), p2=_runner_up_said(p, p2)))


def _top_said(p: float) -> str:
    """'p = 41.5%'; near the question's line, enough digits to show which side of 50% it falls (not 'p = 50.0%'
    for a top token just over half)."""
    said = format.p_is(p)
    return f"p = {format.apart(p * 100, 50)[0]}%" if said == "p = 50.0%" and p != 0.5 else said


def _runner_up_said(p: float, p2: float) -> str:
    """The runner-up's percentage, said to tie the top's when the digits shown are the same."""
    said = format.percent(p2)
    return f"{said} too (equal to the digits shown)" if said == format.percent(p) else said


def step_logprob(live: Live) -> Checked:
    p = float(live.session.next_pipeline(live.config).raw_probs.max())
    now = live.session.sequence_logprob()
    return Checked(1, answer(text.STEP_LOGPROB, now=now, p=p, best=float(torch.tensor(p).log())))


def step_entropy(live: Live) -> Checked:
    bits = entropy_bits(live.session.next_pipeline(live.config).raw_probs)
    return Checked(bucket(bits, (1, 4)), answer(text.STEP_ENTROPY, bits=bits, even=2 ** bits))


QUESTIONS: tuple[Question, ...] = (
    Question("top", text.STEP_TOP, step_top),
    Question("logprob", text.STEP_LOGPROB, step_logprob),
    Question("entropy", text.STEP_ENTROPY, step_entropy),
)
