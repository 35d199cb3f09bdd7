"""How a session's passes run: the two things a host may hand a ``Session``, and the solo default.

A notebook steps a session alone: each decode token is one pass through ``decode.forward`` and every
prompt is prefilled afresh. A server wants more (tabs stepping together sharing one pass, a prompt
prefilled once for every tab), but that is the runtime's business, so the engine only says what it
needs: a ``StepPass`` (one decode token on a tab's cache) and a ``PrefillCache`` (prefills kept by
prompt). The runtime's batcher and prefix cache fit these shapes; the engine never imports them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch
from transformers import DynamicCache

from autoreg_core.engine import decode


@dataclass(frozen=True)
class PassResult:
    """What one decode step learns of the pass it rode in."""

    logits: torch.Tensor  # float32 [vocab]: this row's next-token logits
    ms: float  # wall time of the whole pass
    rows: int = 1  # rows in the pass: 1 = alone; more = other tabs' steps rode along


class StepPass(Protocol):
    """Feed one token on ``cache`` (it grows by one position) and return the next logits.

    ``owner`` names whose step it is (the stepping ``Session``), so a pass shared between tabs can
    tell one tab's steps from another's."""

    def __call__(self, cache: DynamicCache, token: int, owner: object = None) -> PassResult: ...


class PrefillHit(Protocol):
    """A tab's own copy of a stored prefill: a cache it may extend, the next-token logits, the pass's ms."""

    cache: DynamicCache
    logits: torch.Tensor
    prefill_ms: float


class PrefillCache(Protocol):
    """Prefills kept by prompt: ``lookup`` before a prefill, ``remember`` after a fresh one."""

    def lookup(self, bundle, ids) -> PrefillHit | None: ...

    def remember(self, bundle, ids, cache: DynamicCache, logits: torch.Tensor, ms: float) -> object: ...


def solo_step(bundle) -> StepPass:
    """The notebook's step pass: each decode token alone through ``decode.forward``."""

    def step(cache: DynamicCache, token: int, owner: object = None) -> PassResult:
        fwd = decode.forward(bundle, [token], cache)
        return PassResult(fwd.logits[0], fwd.ms, 1)

    return step
