"""Long prompts kept on the server under a short id, so their links stay short.

Bounded by bytes, per tab and in total: a tab's own oldest prompts go first when it passes its share,
and the oldest across the process when the total is passed, so one tab cannot push the others' links
out by sheer count. The store lives in this server process: a link with an id opens on this server
until it restarts (the README says so).
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st

PER_TAB_BYTES = 256 * 1024  # a tab's own prompts (about a hundred long prompts)
TOTAL_BYTES = 16 * 1024 * 1024  # every tab's together


class PromptStore:
    """id → prompt text, oldest first; each entry remembers the tabs that kept it."""

    def __init__(self, per_tab_bytes: int = PER_TAB_BYTES, total_bytes: int = TOTAL_BYTES):
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._owners: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        self.per_tab_bytes, self.total_bytes = per_tab_bytes, total_bytes

    @staticmethod
    def _size(text: str) -> int:
        return len(text.encode("utf-8"))

    def keep(self, text: str, owner: str = "") -> str:
        """Keep ``text`` for the tab ``owner``; its 12-hex id (the same text always gets the same id)."""
        pid = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        with self._lock:
            self._texts[pid] = text
            self._texts.move_to_end(pid)
            self._owners.setdefault(pid, set()).add(owner)
            self._trim_owner(owner, keep=pid)
            self._trim_total(keep=pid)
        return pid

    def get(self, pid: str) -> str | None:
        with self._lock:
            return self._texts.get(pid)

    def bytes_held(self, owner: str | None = None) -> int:
        """Bytes of text held, for one tab or in total."""
        with self._lock:
            return sum(self._size(t) for pid, t in self._texts.items() if owner is None or owner in self._owners[pid])

    def _drop(self, pid: str, owner: str | None) -> None:
        """Forget ``owner``'s claim on ``pid`` (or every claim): the text goes when nobody keeps it."""
        owners = self._owners.get(pid, set())
        owners.difference_update(owners.copy() if owner is None else {owner})
        if not owners:
            self._texts.pop(pid, None)
            self._owners.pop(pid, None)

    def _trim_owner(self, owner: str, keep: str) -> None:
        mine = [pid for pid in self._texts if owner in self._owners[pid]]
        held = sum(self._size(self._texts[pid]) for pid in mine)
        for pid in mine:  # oldest first
            if held <= self.per_tab_bytes or pid == keep:
                break
            held -= self._size(self._texts[pid])
            self._drop(pid, owner)

    def _trim_total(self, keep: str) -> None:
        held = sum(self._size(t) for t in self._texts.values())
        for pid in list(self._texts):  # oldest first
            if held <= self.total_bytes or pid == keep:
                break
            held -= self._size(self._texts[pid])
            self._drop(pid, None)


@st.cache_resource
def prompt_store() -> PromptStore:
    """One store per server process, shared by every tab."""
    return PromptStore()


def tab_id() -> str:
    """This tab's id (its Streamlit session), the owner its prompts are counted against."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""
