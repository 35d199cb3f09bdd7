"""One object per server process, made on first use: the settings, the live classes.

A server's tabs run on many threads, and the first of them to ask makes the object; the others wait for it and
get the same one. Tests forget it (``reset``) when they change what it is made from (the environment).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Once(Generic[T]):
    """Holds the one object ``make`` builds, built on the first ``get`` (thread-safe)."""

    def __init__(self, make: Callable[[], T]):
        self._make = make
        self._made: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        found = self._made
        if found is None:
            with self._lock:
                if self._made is None:
                    self._made = self._make()
                found = self._made
        return found

    def reset(self) -> None:
        """Forget the object: the next ``get`` makes a new one."""
        with self._lock:
            self._made = None
