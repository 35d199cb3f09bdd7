"""The serving page's predict-then-check questions: what a batch reads, and weights against caches."""
from __future__ import annotations

from autoreg_core.experiments.roofline import step_budget
from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.serving import text
from autoreg_ui.predict import Checked, Live, Question, answer, bucket


def serving_batch(live: Live) -> Checked:
    spec = live.bundle.spec
    one, eight = step_budget(spec, 1, 256), step_budget(spec, 8, 256)
    ratio = eight.bytes_read / one.bytes_read
    return Checked(bucket(ratio, (2, 6)), answer(text.SERVING_BATCH, ratio=ratio, weights=human_bytes(one.weight_bytes),
                                                 cache_1=human_bytes(one.cache_bytes),
                                                 cache_8=human_bytes(eight.cache_bytes)))


def serving_memory(live: Live) -> Checked:
    spec = live.bundle.spec
    weights, caches = spec.weight_bytes, spec.cache_bytes(2048, batch=32)
    reading = (text.WEIGHTS_LARGER.format(times=weights / caches) if weights > caches
               else text.CACHES_LARGER.format(times=caches / weights))
    return Checked(0 if weights > caches else 1,
                   answer(text.SERVING_MEMORY, weights=human_bytes(weights), caches=human_bytes(caches),
                          per_token=human_bytes(spec.cache_bytes_per_position), reading=reading))


def serving_crossover(live: Live) -> Checked:
    one = step_budget(live.bundle.spec, 1, 256)
    batch = one.weight_bytes // one.cache_bytes + 1  # the first batch whose caches outweigh the weights
    return Checked(bucket(batch, (10, 100, 1000)),
                   answer(text.SERVING_CROSSOVER, batch=batch, weights=human_bytes(one.weight_bytes),
                          per_sequence=human_bytes(one.cache_bytes)))


QUESTIONS: tuple[Question, ...] = (
    Question("batch", text.SERVING_BATCH, serving_batch, needs_session=False),
    Question("memory", text.SERVING_MEMORY, serving_memory, needs_session=False),
    Question("crossover", text.SERVING_CROSSOVER, serving_crossover, needs_session=False),
)
