"""The training loss, computed on a text the learner made: cross-entropy, perplexity, one pass for all of it.

Training a language model minimises the **cross-entropy**: over a text of T tokens, the mean of
−log p(x_t | x_<t) for t = 2 … T, the model's probability of each *actual* next token given the true
text before it. **Perplexity** is exp(loss): the number of equally likely tokens the model would be
choosing among, on average. Teacher forcing gives all T − 1 losses in one forward pass (the causal mask
lets position t see only positions ≤ t), which is what transformers' ``model(ids, labels=ids).loss``
computes; this module computes the same from the logits, position by position, so each term can be shown.

For the generated part of a session's text, each term is the negative of the log-prob the session
recorded when it stepped (``StepRecord.logprob``, under the raw softmax): the loss the model would be
trained with on its own text is a sum of numbers the learner already watched being produced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from autoreg_core.experiments.teacher_forcing import MAX_TOKENS, teacher_forced


@dataclass(frozen=True)
class TextLoss:
    """Every next-token loss of one text, from one pass, and what they add up to."""

    ids: list[int]  # the text read (at most MAX_TOKENS)
    prompt_len: int  # ids[:prompt_len] are the prompt (the rest were generated or forced)
    losses: list[float]  # −log p(ids[t] | ids[:t]) for t = 1 … len(ids) − 1, in nats
    top_ids: list[int]  # the model's own most likely token at each of those positions
    ms: float  # the one forward pass

    @property
    def loss(self) -> float:
        """Cross-entropy: the mean of every term (transformers' ``labels=ids`` loss)."""
        return mean(self.losses)

    @property
    def perplexity(self) -> float:
        return math.exp(self.loss)

    @property
    def prompt_losses(self) -> list[float]:
        """The terms whose target is a prompt token (positions 1 … prompt_len − 1)."""
        return self.losses[:max(0, self.prompt_len - 1)]

    @property
    def generated_losses(self) -> list[float]:
        """The terms whose target is a token the session added (generated or forced)."""
        return self.losses[max(0, self.prompt_len - 1):]

    @property
    def hits(self) -> int:
        """Positions where the model's own top token is the token that followed."""
        return sum(int(t == y) for t, y in zip(self.top_ids, self.ids[1:]))


def mean(values: list[float]) -> float:
    """The mean of ``values``; NaN for none (a one-token prompt has no prompt term)."""
    return sum(values) / len(values) if values else float("nan")


def text_loss(bundle, ids: list[int], prompt_len: int) -> TextLoss:
    """Every next-token loss of ``ids`` (cut to ``MAX_TOKENS``) in one teacher-forced pass."""
    ids = [int(i) for i in ids[:MAX_TOKENS]]
    if len(ids) < 2:
        raise ValueError("A loss needs at least two tokens: one to read and one to predict.")
    scored = teacher_forced(bundle, ids, 1)  # position t − 1 predicts token t, for every t ≥ 1
    return TextLoss(ids, min(int(prompt_len), len(ids)), [-lp for lp in scored.logprobs], scored.top_ids, scored.ms)


def recorded_gaps(scored: TextLoss, records) -> list[float]:
    """For each step the pass covers: |teacher-forced loss + the step's recorded log-prob| (0 up to rounding)."""
    generated = scored.generated_losses
    return [abs(loss + record.logprob) for loss, record in zip(generated, records)]


def shared_pass_steps(records) -> int:
    """How many of ``records``' steps chose from logits that a decode pass shared with other tabs' steps produced.

    Step k ≥ 2 chose from the logits of the pass that fed token k − 1 (``records[k − 2].pass_rows`` rows); step 1
    from the prefill's, which records no rows (a prompt of two tokens or more is always a solo pass). So this
    counts what the records show: an undo past the kept logits recomputes them in a pass it does not record.
    """
    return sum(1 for record in list(records)[:-1] if record.pass_rows > 1)
