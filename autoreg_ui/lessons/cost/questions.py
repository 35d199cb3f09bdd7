"""The cost page's predict-then-check questions: a naive step against a cached one, counted from the model's shape."""
from __future__ import annotations

from autoreg_ui.format import human_count
from autoreg_ui.lessons.cost import text
from autoreg_ui.lessons.cost.controller import attention_share
from autoreg_ui.predict import Checked, Live, Question, answer, bucket

COST_LENGTH = 1024


def cost_flops(live: Live) -> Checked:
    spec = live.bundle.spec
    naive, cached = spec.flops_step(COST_LENGTH, cached=False), spec.flops_step(COST_LENGTH, cached=True)
    ratio = naive / cached
    return Checked(bucket(ratio, (2, 20, 200)), answer(text.COST_FLOPS, length=COST_LENGTH, ratio=ratio,
                                                       naive=human_count(naive), cached=human_count(cached)))


def cost_growth(live: Live) -> Checked:
    spec = live.bundle.spec
    short, long = spec.flops_step(128, cached=True), spec.flops_step(2048, cached=True)
    growth = long / short - 1
    right = 0 if growth <= 0 else (2 if long >= 16 * short else 1)
    return Checked(right, answer(text.COST_GROWTH, growth=growth, at_128=human_count(short),
                                 at_2048=human_count(long)))


SHARE_LENGTH = 2048


def cost_share(live: Live) -> Checked:
    spec = live.bundle.spec
    share = attention_share(spec, SHARE_LENGTH)
    total = spec.flops_step(SHARE_LENGTH, cached=True)
    return Checked(bucket(share, (0.1, 0.3, 0.6)),
                   answer(text.COST_SHARE, share=share, length=SHARE_LENGTH, total=human_count(total),
                          attention=human_count(spec.attention_flops_per_key * SHARE_LENGTH),
                          crossover=spec.attention_equals_layers_at))


QUESTIONS: tuple[Question, ...] = (
    Question("flops", text.COST_FLOPS, cost_flops, fill=lambda live: {"length": COST_LENGTH}, needs_session=False),
    Question("growth", text.COST_GROWTH, cost_growth, needs_session=False),
    Question("share", text.COST_SHARE, cost_share, fill=lambda live: {"length": SHARE_LENGTH}, needs_session=False),
)
