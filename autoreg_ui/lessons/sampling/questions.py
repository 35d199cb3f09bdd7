"""The sampling lab's predict-then-check questions: what temperature, top-p and top-k do to this step's logits."""
from __future__ import annotations

import torch

from autoreg_core.engine.config import SamplingConfig
from autoreg_core.engine.decode import process
from autoreg_ui.lessons.sampling import text
from autoreg_ui.predict import Checked, Live, Question, answer, bucket


def _raw_logits(live: Live) -> torch.Tensor:
    return live.session.next_pipeline(SamplingConfig()).stages[0].scores


def sampling_temperature(live: Live) -> Checked:
    logits, ids = _raw_logits(live), live.session.ids
    p1 = float(process(logits, ids, SamplingConfig(temperature=1.0)).probs.max())
    p05 = float(process(logits, ids, SamplingConfig(temperature=0.5)).probs.max())
    right = 2 if abs(p05 - p1) < 5e-4 else (0 if p05 > p1 else 1)
    return Checked(right, answer(text.SAMPLING_TEMPERATURE, p1=p1, p05=p05))


def sampling_top_p(live: Live) -> Checked:
    pipe = process(_raw_logits(live), live.session.ids, SamplingConfig(top_p=0.9))
    kept_mask = pipe.probs > 0
    kept = int(kept_mask.sum())
    mass = float(pipe.raw_probs[kept_mask].sum())
    return Checked(bucket(kept, (1, 10, 100)), answer(text.SAMPLING_TOP_P, kept=kept, mass=mass))


def sampling_top_k(live: Live) -> Checked:
    logits, ids = _raw_logits(live), live.session.ids
    pipe = process(logits, ids, SamplingConfig(top_k=5))
    p_raw, p_k = float(pipe.raw_probs.max()), float(pipe.probs.max())
    mass = float(pipe.raw_probs[pipe.probs > 0].sum())
    right = 0 if p_k > p_raw + 5e-4 else (1 if p_k >= p_raw - 5e-4 else 2)
    return Checked(right, answer(text.SAMPLING_TOP_K, p_raw=p_raw, p_k=p_k, mass=mass))


QUESTIONS: tuple[Question, ...] = (
    Question("temperature", text.SAMPLING_TEMPERATURE, sampling_temperature),
    Question("top_p", text.SAMPLING_TOP_P, sampling_top_p, fill=lambda live: {"vocab": live.bundle.spec.vocab}),
    Question("top_k", text.SAMPLING_TOP_K, sampling_top_k),
)
