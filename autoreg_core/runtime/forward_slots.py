"""At most N forward passes at once in a server process: the forward-slot limiter.

A server runs each tab's forward pass in that tab's own thread. A decoder pass is hundreds of small
ops, and each gives Python's GIL up and takes it back: past about one runnable pass per core, thirty
tabs' threads mostly queue for the GIL, and every pass gets slower. A pass that waits for a slot
sleeps (no CPU).

How passes reach the limiter without the engine knowing the server: the server sets ``held`` as the
``forward_gate`` of the model bundle it serves (``ModelBundle.forward_gate``), and ``decode.forward``
enters a bundle's gate around every pass. So every pass on that model goes through one limiter:
the tabs' prefills and solo steps, the batcher's shared passes (they call ``decode.forward`` too), and
what the lessons compute; and ``Forward.ms`` still starts once the pass holds its slot. Wrapping only
the step pass a session is handed would have left prefills and the lessons' passes unlimited.
"""
from __future__ import annotations

import contextlib
import threading

_slots: threading.BoundedSemaphore | None = None
_slot_count: int | None = None  # what it was made for: it is replaced only when this changes
_lock = threading.Lock()


def limit_concurrent_forwards(slots: int | None) -> None:
    """At most ``slots`` forward passes run at once through ``held`` in this process (None or 0: no limit)."""
    global _slots, _slot_count
    with _lock:
        if (slots or None) == _slot_count:
            return  # one limiter per process: loading another model keeps it (and the passes waiting on it)
        _slots = threading.BoundedSemaphore(slots) if slots else None
        _slot_count = slots or None


def forward_slot_count() -> int | None:
    """How many forward passes may run at once in this process (None: no limit was set)."""
    return _slot_count


def held() -> contextlib.AbstractContextManager:
    """A forward slot for one pass (the gate a served bundle's passes go through); no wait without a limit."""
    return _slots or contextlib.nullcontext()
