"""What the tabs of the classes served by this process share in its memory: the class store, each class's live
text (the teacher's session snapshot at the class's recipe), the teacher tab that leads each class, the text each
sampling round draws from, and the pieces every follower draws the same.

The class itself lives in the store (a restarted server finds it again); everything else here is what this
process learned from its tabs, so a follower computes nothing the teacher's tab (or one rebuild) did not. The UI
(``autoreg_ui.classroom.live``) builds the texts and draws; this object only keeps them. Every read and write
takes one lock, so a tab's thread reads one consistent snapshot; a rebuild takes a lock of its own per class or
round (``build_lock``), so one tab builds and the others wait for its result.

Pure Python: the snapshots and prefixes are the engine's, named here for type checkers only.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from autoreg_server import settings
from autoreg_server.class_store import ClassStore, default_path
from autoreg_server.once import Once

if TYPE_CHECKING:
    from autoreg_core.engine.prefix import Prefix
    from autoreg_core.engine.session import SessionSnapshot

KEPT_PREFIXES = 8  # sampling rounds whose prefix (KV cache of the teacher's text) this process keeps
MEMO_KEPT = 64  # drawn pieces (strips, figures) of the classes' current texts this process keeps


def open_store() -> ClassStore:
    """This server's classes (one SQLite file: ``AUTOREG_CLASS_DB``, default under the app's cache dir)."""
    return ClassStore(default_path(), hours=settings.current().class_hours)


class LiveClasses:
    """The classes' shared state in one server process (one instance: ``shared()``)."""

    def __init__(self, opener: Callable[[], ClassStore] = open_store, kept_prefixes: int = KEPT_PREFIXES,
                 memo_kept: int = MEMO_KEPT):
        self.kept_prefixes = kept_prefixes
        self.memo_kept = memo_kept
        self._store: Once[ClassStore] = Once(opener)  # its own lock: a slow opening holds up no reader of the texts
        self._lock = threading.Lock()
        self._texts: dict[str, tuple[dict, SessionSnapshot]] = {}  # code → (recipe, the teacher's session at it)
        self._leaders: dict[str, str] = {}  # code → the teacher tab that last changed the class's text
        self._prefixes: OrderedDict[int, Prefix] = OrderedDict()  # round id → the text every draw starts from
        self._build_locks: dict[Hashable, threading.Lock] = {}  # one rebuild at a time per class or round
        self._memo: OrderedDict[Hashable, Any] = OrderedDict()

    # ------------------------------------------------------------ the store
    def store(self) -> ClassStore:
        """The process's class store, opened on first use (an opening that fails is tried again next time)."""
        return self._store.get()

    # ------------------------------------------------------------ each class's live text and its leader
    def text(self, code: str) -> tuple[dict, SessionSnapshot] | None:
        """The class's text held here: (its recipe, the teacher's snapshot at that recipe), or None."""
        with self._lock:
            return self._texts.get(code)

    def publish(self, code: str, recipe: dict, snapshot: SessionSnapshot, leader: str) -> None:
        """The teacher tab ``leader`` changed the class's text to ``snapshot`` (at ``recipe``): both at once."""
        with self._lock:
            self._texts[code] = (recipe, snapshot)
            self._leaders[code] = leader

    def set_text(self, code: str, recipe: dict, snapshot: SessionSnapshot) -> None:
        """The class's text rebuilt here at ``recipe``."""
        with self._lock:
            self._texts[code] = (recipe, snapshot)

    def keep_text(self, code: str, recipe: dict, snapshot: SessionSnapshot) -> None:
        """The class's text at ``recipe``, unless one is held already (a tab's own may be newer)."""
        with self._lock:
            self._texts.setdefault(code, (recipe, snapshot))

    def forget(self, code: str) -> None:
        """A class that ended: its text goes."""
        with self._lock:
            self._texts.pop(code, None)

    def leader(self, code: str | None) -> str | None:
        """The teacher tab that made the class's latest change; None when no tab acted on it in this process."""
        with self._lock:
            return self._leaders.get(code) if code is not None else None

    def set_leader(self, code: str, tab: str) -> None:
        with self._lock:
            self._leaders[code] = tab

    def forget_tabs(self) -> None:
        """Everything learned from the tabs (texts, leaders) goes, as after a restart; the store stays."""
        with self._lock:
            self._texts.clear()
            self._leaders.clear()

    # ------------------------------------------------------------ rebuilds, one at a time
    def build_lock(self, key: Hashable) -> threading.Lock:
        """The lock one rebuild of ``key`` (a class's code, ``("round", id)``, ...) holds while the others wait."""
        with self._lock:
            return self._build_locks.setdefault(key, threading.Lock())

    # ------------------------------------------------------------ the sampling rounds' prefixes
    def keep_prefix(self, rid: int, prefix: Prefix) -> None:
        """The text round ``rid`` draws from; the newest ``kept_prefixes`` rounds are kept."""
        with self._lock:
            self._prefixes[rid] = prefix
            self._prefixes.move_to_end(rid)
            while len(self._prefixes) > self.kept_prefixes:
                self._prefixes.popitem(last=False)

    def prefix(self, rid: int) -> Prefix | None:
        with self._lock:
            return self._prefixes.get(rid)

    def kept_rounds(self) -> list[int]:
        """The rounds whose prefix is kept, oldest first."""
        with self._lock:
            return list(self._prefixes)

    def round_prefix(self, rid: int, build: Callable[[], Prefix]) -> Prefix:
        """Round ``rid``'s prefix: the one kept, else ``build()`` once (the tabs asking meanwhile wait for it)."""
        held = self.prefix(rid)
        if held is not None:
            return held
        with self.build_lock(("round", rid)):
            held = self.prefix(rid)
            if held is None:
                held = build()
                self.keep_prefix(rid, held)
            return held

    # ------------------------------------------------------------ pieces drawn the same for every follower
    def memo(self, key: Hashable, build: Callable[[], Any], building: Hashable | None = None) -> Any:
        """What ``build()`` returns for ``key``, built once while kept (the newest ``memo_kept`` are); the tabs
        asking for the same ``building`` meanwhile wait for one build and take it. Shared: never changed."""
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        with self.build_lock(("memo", key) if building is None else building):
            with self._lock:
                if key in self._memo:
                    return self._memo[key]
            built = build()
            with self._lock:
                self._memo[key] = built
                self._memo.move_to_end(key)
                while len(self._memo) > self.memo_kept:
                    self._memo.popitem(last=False)
            return built

    def memo_size(self) -> int:
        with self._lock:
            return len(self._memo)


# ---------------------------------------------------------------- the server's one instance
_shared: Once[LiveClasses] = Once(lambda: LiveClasses())


def shared() -> LiveClasses:
    """The process's live classes, made on first call (the server's start, or the first tab)."""
    return _shared.get()


def reset_for_tests() -> None:
    """Forget the live classes, so the next ``shared()`` starts empty and opens the store again (a test changed
    ``AUTOREG_CLASS_DB``)."""
    _shared.reset()
