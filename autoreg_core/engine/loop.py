"""The generation loop, once: choose a token from the logits, feed it in, repeat.

Every plain loop of the engine runs this one (a timed greedy run, beam search's greedy comparison,
the plain decoding that speculative decoding is measured against). ``Session.step`` is the same
loop taken one step at a time, with a record of everything it did.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

import torch

from autoreg_core.engine import decode
from autoreg_core.engine.config import GREEDY, SamplingConfig


@dataclass(frozen=True)
class LoopStep:
    """One chosen token, the logits it was chosen from, and the decode pass that produced them."""
    token: int
    logits: torch.Tensor  # [vocab]: the distribution this token was drawn from
    pass_ms: float | None  # the decode pass that gave these logits (None: they came with the context)


Feed = Callable[[object, int], tuple[torch.Tensor, float]]  # (cache, token) → (next logits [vocab], pass ms)


def solo_feed(bundle) -> Feed:
    """One decode pass of its own per token (every timed run uses this)."""
    def feed(cache, token: int) -> tuple[torch.Tensor, float]:
        fwd = decode.forward(bundle, [token], cache)
        return fwd.logits[0], fwd.ms
    return feed


def generation_loop(bundle, cache, context: list[int], logits: torch.Tensor, max_new: int,
                    config: SamplingConfig = GREEDY, generator: torch.Generator | None = None, *,
                    eos: Collection[int] = (), should_stop: Callable[[], bool] | None = None,
                    feed: Feed | None = None) -> Iterator[LoopStep]:
    """Up to ``max_new`` tokens after ``context`` (whose next-token ``logits`` are given, its cache filled).

    ``context`` grows in place. Each token is handed out as soon as it is chosen; the next decode pass
    runs when the caller asks for the next token. Ends after an EOS token, at ``max_new``, or when
    ``should_stop()`` says so before a pass; the last token is not fed back (nothing reads its logits).
    ``feed`` runs the decode pass (default: a solo pass; a tab's draw may share passes through the batcher).
    """
    feed = feed or solo_feed(bundle)
    pass_ms = None
    for i in range(max(0, int(max_new))):
        token = int(decode.choose(logits, context, config, generator).token_id)
        context.append(token)
        yield LoopStep(token, logits, pass_ms)
        if token in eos or i == max_new - 1 or (should_stop is not None and should_stop()):
            return
        logits, pass_ms = feed(cache, token)
