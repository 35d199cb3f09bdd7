"""Training is parallel, generation is sequential: teacher forcing over a finished text.

In training the whole text is known, so one forward pass with the causal mask gives, at every
position t, the model's distribution for token t + 1 given the true tokens before it (teacher
forcing). Generation cannot do that: token t + 1 must exist before position t + 1 can be read. On a
finished generation both views must agree, token for token: the log-probability the session
recorded step by step is the one the single pass assigns. What differs between training and
generation is where the prefix came from (the data, or the model's own draws), not the arithmetic:
that difference is exposure bias.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from autoreg_core.engine import decode
from autoreg_core.experiments.prefill_decode import greedy_run

MAX_TOKENS = 512  # one pass builds [tokens, vocab] float32 logits: ~100 MB at 512 tokens for a 49k vocabulary
CHUNK_ROWS = 64  # log-softmax in float64 a few rows at a time


@dataclass
class TeacherForced:
    """Every position's log-probability of the token that actually followed, from one pass."""

    ids: list[int]  # the text that was read (prompt + generated, at most MAX_TOKENS)
    start: int  # the first position scored: tokens ids[start:] are scored
    logprobs: list[float]  # natural log p(ids[t] | ids[:t]) for t = start …
    top_ids: list[int]  # the model's own most likely token at each of those positions
    ms: float  # the one forward pass

    @property
    def scored_ids(self) -> list[int]:
        return self.ids[self.start:]


def teacher_forced(bundle, ids: list[int], start: int) -> TeacherForced:
    """One pass over ``ids`` (no cache, every position's logits) scoring ``ids[start:]``.

    The log-softmax is taken in float64 exactly as a session step records ``logprob``, so the two
    agree to float32 rounding of the logits.
    """
    ids = [int(i) for i in ids[:MAX_TOKENS]]
    if not 1 <= start < len(ids):
        raise ValueError(f"Nothing to score: {len(ids)} tokens, scoring from position {start}.")
    fwd = decode.forward(bundle, ids, None, all_positions=True)
    rows = fwd.logits[0, start - 1:len(ids) - 1]  # position t − 1 predicts token t
    targets = torch.tensor(ids[start:], dtype=torch.long)
    logprobs, tops = [], []
    for lo in range(0, rows.shape[0], CHUNK_ROWS):
        chunk = torch.log_softmax(rows[lo:lo + CHUNK_ROWS].double(), dim=-1)
        logprobs += chunk.gather(1, targets[lo:lo + CHUNK_ROWS].view(-1, 1))[:, 0].tolist()
        tops += chunk.argmax(dim=-1).tolist()
    return TeacherForced(ids, start, logprobs, tops, fwd.ms)


def stepped_forward_ms(session) -> float:
    """The passes whose logits the recorded log-probs came from: the prefill and every step but the last."""
    if session.prefill_record is None or not session.records:
        return 0.0
    return session.prefill_record.time_ms + sum(r.forward_ms for r in session.records[:-1])


def first_forced_step(records) -> int | None:
    """The 1-based index of the first forced step, None when every token was the model's own."""
    return next((r.index for r in records if r.forced), None)


def own_continuation(bundle, ids: list[int], position: int, n_new: int) -> list[int]:
    """What the model writes itself (greedy) from ``ids[:position]``: the branch a forced token cut off."""
    return greedy_run(bundle, ids[:position], n_new).generated_ids
