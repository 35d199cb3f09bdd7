"""Who asked a batcher for a step lately: each owner's last ask, by weak reference, so the serving page can say
whether anyone else is generating. An ended request stops counting at once; a closed tab once Streamlit drops its
session state, which holds its ``Session`` (no sooner than ``server.disconnectedSessionTTL`` after the tab
disconnected, 120 s by default)."""
from __future__ import annotations

from collections.abc import Callable

KEEP_S = 60.0  # the longest window asked about (the live panel's minute)
MOST = 512  # owners kept before the gone and the old are dropped on the next note


class RecentOwners:
    """Each owner's last ask (``time.monotonic()``) under its id. Not locked: the batcher calls it under its own."""

    def __init__(self, keep_s: float = KEEP_S, most: int = MOST):
        self.keep_s, self.most = keep_s, most
        self._last: dict[int, tuple[float, Callable[[], object]]] = {}

    def note(self, owner: object, ref: Callable[[], object], when: float) -> None:
        """``owner`` (weakly referenced by ``ref``) asked at ``when``."""
        self._last[id(owner)] = (when, ref)
        if len(self._last) > self.most:
            self.forget(when)

    def forget(self, now: float) -> None:
        """Drop the owners that are gone or asked more than ``keep_s`` ago."""
        self._last = {k: (when, ref) for k, (when, ref) in self._last.items()
                      if now - when <= self.keep_s and ref() is not None}

    def others(self, me: object, within_s: float, now: float) -> int:
        """Owners other than ``me`` still alive that asked in the last ``within_s`` seconds."""
        self.forget(now)
        alive = [ref() for when, ref in self._last.values() if now - when <= within_s]
        return sum(1 for who in alive if who is not None and who is not me)
