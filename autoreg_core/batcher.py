"""The class is the batch: decode steps that several tabs ask for at once run as one forward pass.

A decode step reads every weight to compute one token, so a pass over 8 rows costs little more than a
pass over 1 (the serving lesson measures it). One ``DecodeBatcher`` per loaded model takes the decode
steps sessions ask for; a worker thread runs those waiting as one pass: each tab's own KV cache joined
by left padding (``padding``), an attention mask and position ids per row, the new keys and values
written back to each tab's cache, the logits split per row.

A lone tab never waits: a pass of one row is exactly the solo ``decode.forward``. Only when other tabs
have stepped within the last ``BUSY_S`` seconds does the worker wait up to ``GATHER_MS`` to collect
more rows, and a pass takes at most ``MAX_ROWS`` of them. Prefills, attention-capturing steps and
every timed measurement stay solo passes.

"Another tab" is another *owner*: the object a step names as its own (a ``Session`` passes itself;
by default it is the step's cache). Owners are remembered by weak reference, so an owner that is
gone (a tab closed, a cache dropped by a Reset) never counts as someone stepping.
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import DynamicCache

from . import decode
from .padding import left_padded_cache

MAX_ROWS = 12  # rows per pass: 12 rows cost ~1.1× a 8-row pass on this CPU, and the padding copy grows with rows
GATHER_MS = 4.0  # the longest a step waits for company, and only when other tabs are stepping
BUSY_S = 1.0  # "other tabs are stepping": another cache stepped within this window
MAX_PADDED_POSITIONS = 16_384  # rows × longest cache per pass: bounds the padded copy (~720 MiB for SmolLM2 fp32)
HISTORY_S = 60.0  # what the live panel reads: the passes of the last minute


def enabled(environ=os.environ) -> bool:
    """``AUTOREG_BATCH=0`` turns cross-tab batching off (every step a solo pass, as before)."""
    return environ.get("AUTOREG_BATCH", "1").strip().lower() not in ("0", "false", "no", "off")


def worker_count(environ=os.environ) -> int:
    """Passes that may run at once: ``AUTOREG_BATCH_WORKERS``, else as many as forward passes may run at once
    (``decode.limit_concurrent_forwards``: cores ÷ torch threads on a server), else 1.

    One worker would leave a core idle while it runs a pass on the other with one torch thread; with one
    worker per forward slot, passes of gathered rows run side by side and every core works.
    """
    try:
        wanted = int(environ.get("AUTOREG_BATCH_WORKERS", "0"))
    except ValueError:
        wanted = 0
    return max(1, wanted or decode.forward_slot_count() or 1)


@dataclass(frozen=True)
class Shared:
    """What a step learns of the pass it rode in."""
    logits: torch.Tensor  # float32 [vocab]: this row's next-token logits
    ms: float  # wall time of the whole pass
    rows: int  # rows in the pass: 1 = alone


@dataclass(frozen=True)
class Totals:
    """Passes since a batcher started, the tokens they served, and those that shared a pass with others."""
    passes: int
    tokens: int
    shared_tokens: int


@dataclass(frozen=True)
class PassRecord:
    at: float  # time.time() when the pass ended
    rows: int
    ms: float


@dataclass
class _Ask:
    cache: DynamicCache
    token: int
    owner: object  # whose step this is: the tab's Session, or the cache itself
    done: threading.Event = field(default_factory=threading.Event)
    result: Shared | None = None
    error: BaseException | None = None


def batched_decode(bundle, caches: list[DynamicCache], tokens: list[int]) -> tuple[list[torch.Tensor], float]:
    """One forward pass feeding ``tokens[i]`` on ``caches[i]`` for every row; each cache grows by one position.

    One row is the plain solo pass. Several rows run on a left-padded copy of their caches; each row's new
    key and value (the last column) are then appended to its own cache, and its logits returned.
    """
    if len(caches) == 1:
        fwd = decode.forward(bundle, [[tokens[0]]], caches[0])
        return [fwd.logits[0]], fwd.ms
    joined, mask = left_padded_cache(bundle, caches)
    lengths = mask.sum(dim=1)
    mask = torch.cat([mask, torch.ones(len(caches), 1, dtype=torch.long)], dim=1)
    fwd = decode.forward(bundle, torch.tensor(tokens).view(-1, 1), joined, attention_mask=mask,
                         position_ids=lengths.view(-1, 1))
    for layer_idx, layer in enumerate(joined.layers):
        for row, cache in enumerate(caches):
            cache.update(layer.keys[row:row + 1, :, -1:, :].clone(), layer.values[row:row + 1, :, -1:, :].clone(),
                         layer_idx)
    return list(fwd.logits), fwd.ms


class DecodeBatcher:
    """Workers per model (``worker_count``): the decode steps waiting when one is free become one pass."""

    def __init__(self, bundle, max_rows: int = MAX_ROWS, gather_ms: float = GATHER_MS, busy_s: float = BUSY_S,
                 workers: int | None = None):
        self.bundle, self.max_rows, self.gather_ms, self.busy_s = bundle, max_rows, gather_ms, busy_s
        self.workers = max(1, workers or worker_count())
        self._cv = threading.Condition()
        self._queue: list[_Ask] = []
        self._recent: deque[tuple[float, Callable[[], object]]] = deque(maxlen=256)  # (when, weak ref to the owner)
        self._passes: deque[PassRecord] = deque()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # workers waiting for an ask
        self._waits = 0  # passes before which the worker waited for company
        self._totals = Totals(0, 0, 0)

    # ---------------------------------------------------------------- the tab's side
    def decode(self, cache: DynamicCache, token: int, owner: object = None) -> Shared:
        """Feed ``token`` on ``cache`` in the next pass; blocks until that pass is done.

        ``owner`` names whose step it is (a tab's ``Session``; default: the cache), so the steps of one
        owner never make the worker wait for "company", whichever cache that owner holds now."""
        owner = cache if owner is None else owner
        ask = _Ask(cache, int(token), owner)
        with self._cv:
            self._recent.append((time.monotonic(), _weak(owner)))
            self._queue.append(ask)
            self._threads = [t for t in self._threads if t.is_alive()]
            if self._idle == 0 and len(self._threads) < self.workers:  # every worker busy: one more may start
                thread = threading.Thread(target=self._work, name="autoreg-decode-batcher", daemon=True)
                self._threads.append(thread)
                thread.start()
            self._cv.notify_all()
        ask.done.wait()
        if ask.error is not None:
            raise ask.error
        return ask.result

    # ---------------------------------------------------------------- the worker
    def _others_stepping(self, now: float) -> bool:
        """An owner that is still alive and not queued asked for a step within ``busy_s``: company may be coming."""
        queued = {id(a.owner) for a in self._queue}
        for when, ref in reversed(self._recent):
            if now - when > self.busy_s:
                return False  # the rest are older still
            who = ref()
            if who is not None and id(who) not in queued:  # alive, so its id is its own
                return True
        return False

    def _take(self) -> list[_Ask]:
        """The next pass's rows (called with the lock held, the queue not empty)."""
        if len(self._queue) < self.max_rows and self._others_stepping(time.monotonic()):
            self._waits += 1
            deadline = time.monotonic() + self.gather_ms / 1000.0
            while len(self._queue) < self.max_rows and (left := deadline - time.monotonic()) > 0:
                self._cv.wait(timeout=left)
        rows: list[_Ask] = []
        longest = 0
        for ask in list(self._queue):
            length = int(ask.cache.get_seq_length()) + 1
            if rows and (len(rows) >= self.max_rows or max(longest, length) * (len(rows) + 1) > MAX_PADDED_POSITIONS):
                break
            rows.append(ask)
            longest = max(longest, length)
        del self._queue[:len(rows)]
        return rows

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._queue:
                    self._idle += 1
                    woken = self._cv.wait(timeout=30.0)
                    self._idle -= 1
                    if not woken and not self._queue:
                        self._threads.remove(threading.current_thread())  # idle: an ask starts a fresh one
                        return
                rows = self._take()
            if not rows:  # another worker took them while this one gathered
                continue
            self._run(rows)
            del rows  # the worker keeps no cache alive between passes (see ``_others_stepping``)

    def _run(self, rows: list[_Ask]) -> None:
        try:
            logits, ms = batched_decode(self.bundle, [a.cache for a in rows], [a.token for a in rows])
            for ask, row_logits in zip(rows, logits):
                ask.result = Shared(row_logits, ms, len(rows))
            self._note(len(rows), ms)
        except BaseException as exc:  # noqa: BLE001 - every waiting tab hears of it, the worker goes on
            for ask in rows:
                ask.error = exc
        finally:
            for ask in rows:
                ask.done.set()

    def _note(self, rows: int, ms: float) -> None:
        now = time.time()
        with self._cv:
            self._passes.append(PassRecord(now, rows, ms))
            t = self._totals
            self._totals = Totals(t.passes + 1, t.tokens + rows, t.shared_tokens + (rows if rows > 1 else 0))
            while self._passes and now - self._passes[0].at > HISTORY_S:
                self._passes.popleft()

    # ---------------------------------------------------------------- what the live panel reads
    def passes(self, within_s: float = HISTORY_S) -> list[PassRecord]:
        """A snapshot of the passes that ended in the last ``within_s`` seconds."""
        now = time.time()
        with self._cv:
            return [p for p in self._passes if now - p.at <= within_s]

    @property
    def waits(self) -> int:
        """How many passes the worker held back, up to ``gather_ms``, waiting for other tabs' steps."""
        with self._cv:
            return self._waits

    def totals(self) -> Totals:
        """Every pass since this batcher started (the live panel's running count)."""
        with self._cv:
            return self._totals


def _weak(owner: object) -> Callable[[], object]:
    """A weak reference to ``owner`` (or, for an object that cannot have one, a strong one)."""
    try:
        return weakref.ref(owner)
    except TypeError:
        return lambda: owner


_batchers: dict[int, DecodeBatcher] = {}
_batchers_lock = threading.Lock()


def batcher_for(bundle) -> DecodeBatcher:
    """The one batcher of this loaded model (created on first use)."""
    with _batchers_lock:
        found = _batchers.get(id(bundle.model))
        if found is None or found.bundle.model is not bundle.model:
            found = _batchers[id(bundle.model)] = DecodeBatcher(bundle)
        return found


@dataclass(frozen=True)
class ServerNow:
    """The last minute of one model's decode passes, for the serving page's live panel."""
    passes: int
    tokens: int  # rows served (one token each)
    window_s: float
    by_rows: dict[int, int]  # rows per pass → how many passes
    since_start: Totals = Totals(0, 0, 0)  # every pass since the server started

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.window_s if self.window_s > 0 else 0.0

    @property
    def shared_share(self) -> float:
        """Share of the tokens that rode in a pass with others."""
        shared = sum(rows * n for rows, n in self.by_rows.items() if rows > 1)
        return shared / self.tokens if self.tokens else 0.0


def server_now(bundle, within_s: float = HISTORY_S) -> ServerNow:
    """What this server's batcher did for ``bundle`` in the last ``within_s`` seconds (a snapshot)."""
    found = batcher_for(bundle)
    passes, totals = found.passes(within_s), found.totals()
    by_rows: dict[int, int] = {}
    for p in passes:
        by_rows[p.rows] = by_rows.get(p.rows, 0) + 1
    return ServerNow(len(passes), sum(p.rows for p in passes), within_s, dict(sorted(by_rows.items())), totals)
