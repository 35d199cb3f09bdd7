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

The pass itself is a function handed to the batcher (``BatchPass``; by default ``timed_batched_decode``),
which returns the rows' logits and where the pass's time went: a test or a measurement hands in its own.

"Another tab" is another *owner*: the object a step names as its own (a ``Session`` passes itself;
by default it is the step's cache). Owners are remembered by weak reference, so an owner that is
gone (a tab closed, a cache dropped by a Reset) never counts as someone stepping.
"""
from __future__ import annotations

import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import DynamicCache

from autoreg_core.engine import decode
from autoreg_core.engine.padding import left_padded_cache, slab_cache, write_back
from autoreg_core.engine.passes import PassResult
from autoreg_core.runtime.forward_slots import forward_slot_count
from autoreg_core.runtime.recent_owners import RecentOwners

MAX_ROWS = 12  # rows per pass: 12 rows cost ~1.1× a 8-row pass on this CPU, and the padding copy grows with rows
GATHER_MS = 4.0  # the longest a step waits for company, and only when other tabs are stepping
BUSY_S = 1.0  # "other tabs are stepping": another cache stepped within this window
MAX_PADDED_POSITIONS = 16_384  # rows × longest cache per pass: bounds the padded copy (~720 MiB for SmolLM2 fp32)
HISTORY_S = 60.0  # what the live panel reads: the passes of the last minute


def worker_count(wanted: int = 0) -> int:
    """Passes that may run at once: ``wanted`` (the server's ``AUTOREG_BATCH_WORKERS``), else as many as forward
    passes may run at once (``forward_slots.limit_concurrent_forwards``: cores ÷ torch threads on a server), else 1.

    One worker would leave a core idle while it runs a pass on the other with one torch thread; with one
    worker per forward slot, passes of gathered rows run side by side and every core works.
    """
    return max(1, wanted or forward_slot_count() or 1)


SWITCH_INTERVAL_MS = 0.0  # 0: Python's own (5 ms); see ``tune_gil``


def tune_gil(interval_ms: float = SWITCH_INTERVAL_MS) -> float:
    """Shorten Python's thread switch interval to ``interval_ms`` (the server's ``AUTOREG_SWITCH_INTERVAL_MS``;
    0: leave Python's) once a worker starts; returns the interval in force, in ms.

    A pass is hundreds of torch ops, and each gives the GIL up and takes it back; while other threads run
    Python, the worker waits for whichever took the GIL to be forced off it, every switch interval. With three
    threads spinning in Python, a 12-row pass took 1.8 s at 5 ms and 0.7 s at 0.2 ms; in a 30-student class on
    a machine loaded by other processes, 0.5 ms measured no better than 5 ms (the pass waited for a core, not
    the GIL), so the default leaves Python's interval and the setting stays for servers where it helps.
    """
    if interval_ms > 0 and sys.getswitchinterval() > interval_ms / 1000.0:
        sys.setswitchinterval(interval_ms / 1000.0)
    return sys.getswitchinterval() * 1000.0


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


@dataclass(frozen=True)
class Breakdown:
    """Sums since a batcher started, for finding where a step's wall time goes: per row, the wait in the queue
    before its pass started and the wait from the pass's end until the tab ran again (the GIL); per pass, the
    worker's wait for company and each ``PassTiming`` part."""
    passes: int = 0
    rows: int = 0
    queued_ms: float = 0.0  # Σ over rows: asked → its pass started (gathering included)
    woke_ms: float = 0.0  # Σ over rows: its pass ended → the tab's thread ran again
    gather_ms: float = 0.0  # Σ over passes: the worker waiting for company
    join_ms: float = 0.0
    forward_ms: float = 0.0
    model_ms: float = 0.0
    write_ms: float = 0.0
    cpu_ms: float = 0.0

    def add(self, **sums: float) -> Breakdown:
        return Breakdown(**{name: getattr(self, name) + sums.get(name, 0) for name in self.__dataclass_fields__})

    def means(self) -> dict[str, float]:
        """Per row (``queued_ms``, ``woke_ms``) and per pass (the rest) means, and rows per pass."""
        per_row = {"queued_ms", "woke_ms"}
        out = {"passes": self.passes, "rows": self.rows,
               "rows_per_pass": round(self.rows / self.passes, 2) if self.passes else None}
        for name in self.__dataclass_fields__:
            if name not in ("passes", "rows"):
                n = self.rows if name in per_row else self.passes
                out[f"mean_{name}"] = round(getattr(self, name) / n, 2) if n else None
        return out


@dataclass
class _Ask:
    cache: DynamicCache
    token: int
    owner: object  # whose step this is: the tab's Session, or the cache itself
    done: threading.Event = field(default_factory=threading.Event)
    result: PassResult | None = None
    error: BaseException | None = None
    asked: float = field(default_factory=time.perf_counter)
    ended: float = 0.0


@dataclass(frozen=True)
class PassTiming:
    """Where one pass's wall time went (ms): joining the rows' caches, the model, writing each row's new
    keys and values back; and the worker thread's CPU over the pass (wall − CPU: waiting for a core or the GIL)."""
    join_ms: float = 0.0
    forward_ms: float = 0.0  # wall, from the call to the logits (a wait for a forward slot included)
    model_ms: float = 0.0  # ``decode.forward``'s own timing (from the moment it held a slot)
    write_ms: float = 0.0
    cpu_ms: float = 0.0

    @property
    def wall_ms(self) -> float:
        return self.join_ms + self.forward_ms + self.write_ms


def batched_decode(bundle, caches: list[DynamicCache], tokens: list[int]) -> tuple[list[torch.Tensor], float]:
    """One forward pass feeding ``tokens[i]`` on ``caches[i]`` for every row; each cache grows by one position.

    One row is the plain solo pass. Several rows run on a left-padded copy of their caches; each row's new
    key and value (the last column) are then appended to its own cache, and its logits returned.
    """
    logits, timing = timed_batched_decode(bundle, caches, tokens)
    return logits, timing.model_ms


def timed_batched_decode(bundle, caches: list[DynamicCache],
                         tokens: list[int]) -> tuple[list[torch.Tensor], PassTiming]:
    """``batched_decode`` and where its time went. Several rows are joined into one slab with a spare column
    (``padding.slab_cache``: one copy of each row's cache, no second one when the pass appends), and each row's
    cache is then rebuilt from the slab in one buffer (``padding.write_back``)."""
    cpu0, t0 = time.thread_time(), time.perf_counter()
    if len(caches) == 1:
        fwd = decode.forward(bundle, [[tokens[0]]], caches[0])
        wall = (time.perf_counter() - t0) * 1000
        return [fwd.logits[0]], PassTiming(0.0, wall, fwd.ms, 0.0, (time.thread_time() - cpu0) * 1000)
    lengths = [int(c.get_seq_length()) for c in caches]
    slab = slab_cache(bundle, caches)
    joined, mask = slab if slab is not None else left_padded_cache(bundle, caches)
    mask = torch.cat([mask, torch.ones(len(caches), 1, dtype=torch.long)], dim=1)
    t1 = time.perf_counter()
    fwd = decode.forward(bundle, torch.tensor(tokens).view(-1, 1), joined, attention_mask=mask,
                         position_ids=torch.tensor(lengths).view(-1, 1))
    t2 = time.perf_counter()
    if slab is not None:
        write_back(joined, caches, [n + 1 for n in lengths])
    else:
        for layer_idx, layer in enumerate(joined.layers):
            for row, cache in enumerate(caches):
                cache.update(layer.keys[row:row + 1, :, -1:, :].clone(), layer.values[row:row + 1, :, -1:, :].clone(),
                             layer_idx)
    t3 = time.perf_counter()
    return list(fwd.logits), PassTiming((t1 - t0) * 1000, (t2 - t1) * 1000, fwd.ms, (t3 - t2) * 1000,
                                        (time.thread_time() - cpu0) * 1000)


BatchPass = Callable[[object, list[DynamicCache], list[int]], tuple[list[torch.Tensor], PassTiming]]
"""One pass over the rows: (bundle, each row's cache, each row's token) → (each row's logits, the pass's timing)."""


class DecodeBatcher:
    """Workers per model (``worker_count``): the decode steps waiting when one is free become one pass
    (``pass_fn``). Its ``decode`` is the step pass (``engine.passes.StepPass``) a server hands its sessions."""

    def __init__(self, bundle, max_rows: int = MAX_ROWS, gather_ms: float = GATHER_MS, busy_s: float = BUSY_S,
                 workers: int | None = None, switch_interval_ms: float = SWITCH_INTERVAL_MS,
                 pass_fn: BatchPass = timed_batched_decode):
        self.bundle, self.max_rows, self.gather_ms, self.busy_s = bundle, max_rows, gather_ms, busy_s
        self.pass_fn = pass_fn
        self.workers = max(1, workers or worker_count())
        self.switch_interval_ms = switch_interval_ms
        self._cv = threading.Condition()
        self._queue: list[_Ask] = []
        self._recent: deque[tuple[float, Callable[[], object]]] = deque(maxlen=256)  # (when, weak ref to the owner)
        self._owners = RecentOwners(HISTORY_S)  # each owner's last ask: who else is generating
        self._passes: deque[PassRecord] = deque()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # workers waiting for an ask
        self._waits = 0  # passes before which the worker waited for company
        self._totals = Totals(0, 0, 0)
        self._breakdown = Breakdown()

    # ---------------------------------------------------------------- the tab's side
    def decode(self, cache: DynamicCache, token: int, owner: object = None) -> PassResult:
        """Feed ``token`` on ``cache`` in the next pass; blocks until that pass is done.

        ``owner`` names whose step it is (a tab's ``Session``; default: the cache), so the steps of one
        owner never make the worker wait for "company", whichever cache that owner holds now."""
        owner = cache if owner is None else owner
        ask = _Ask(cache, int(token), owner)
        with self._cv:
            self._recent.append((asked := time.monotonic(), ref := _weak(owner)))
            self._owners.note(owner, ref, asked)
            self._queue.append(ask)
            self._threads = [t for t in self._threads if t.is_alive()]
            if self._idle == 0 and len(self._threads) < self.workers:  # every worker busy: one more may start
                tune_gil(self.switch_interval_ms)
                thread = threading.Thread(target=self._work, name="autoreg-decode-batcher", daemon=True)
                self._threads.append(thread)
                thread.start()
            self._cv.notify_all()
        ask.done.wait()
        woke = (time.perf_counter() - ask.ended) * 1000
        with self._cv:
            self._breakdown = self._breakdown.add(woke_ms=woke)
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
            started = time.monotonic()
            deadline = started + self.gather_ms / 1000.0
            while len(self._queue) < self.max_rows and (left := deadline - time.monotonic()) > 0:
                self._cv.wait(timeout=left)
            self._breakdown = self._breakdown.add(gather_ms=(time.monotonic() - started) * 1000)
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
        started = time.perf_counter()
        try:
            logits, timing = self.pass_fn(self.bundle, [a.cache for a in rows], [a.token for a in rows])
            for ask, row_logits in zip(rows, logits):
                ask.result = PassResult(row_logits, timing.model_ms, len(rows))
            self._note(len(rows), timing, sum(started - a.asked for a in rows) * 1000)
        except BaseException as exc:  # noqa: BLE001 - every waiting tab hears of it, the worker goes on
            for ask in rows:
                ask.error = exc
        finally:
            ended = time.perf_counter()
            for ask in rows:
                ask.ended = ended
                ask.done.set()

    def _note(self, rows: int, timing: PassTiming, queued_ms: float) -> None:
        now = time.time()
        with self._cv:
            self._passes.append(PassRecord(now, rows, timing.model_ms))
            t = self._totals
            self._totals = Totals(t.passes + 1, t.tokens + rows, t.shared_tokens + (rows if rows > 1 else 0))
            self._breakdown = self._breakdown.add(passes=1, rows=rows, queued_ms=queued_ms, join_ms=timing.join_ms,
                                                  forward_ms=timing.forward_ms, model_ms=timing.model_ms,
                                                  write_ms=timing.write_ms, cpu_ms=timing.cpu_ms)
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

    def breakdown(self) -> Breakdown:
        """Where the steps' time went since this batcher started (see ``Breakdown``)."""
        with self._cv:
            return self._breakdown

    def totals(self) -> Totals:
        """Every pass since this batcher started (the live panel's running count)."""
        with self._cv:
            return self._totals

    def others_stepping(self, me: object = None, within_s: float = HISTORY_S) -> int:
        """Owners other than ``me`` (a tab's ``Session``), still alive, that asked for a step within ``within_s`` s."""
        with self._cv:
            return self._owners.others(me, within_s, time.monotonic())


def _weak(owner: object) -> Callable[[], object]:
    """A weak reference to ``owner`` (or, for an object that cannot have one, a strong one)."""
    try:
        return weakref.ref(owner)
    except TypeError:
        return lambda: owner


_batchers: dict[int, DecodeBatcher] = {}
_batchers_lock = threading.Lock()


def batcher_for(bundle, workers: int | None = None, switch_interval_ms: float = SWITCH_INTERVAL_MS) -> DecodeBatcher:
    """The one batcher of this loaded model, created on first use with ``workers`` and ``switch_interval_ms`` (a
    server makes it as it loads the model, with its operator's settings; later calls get that one)."""
    with _batchers_lock:
        found = _batchers.get(id(bundle.model))
        if found is None or found.bundle.model is not bundle.model:
            found = _batchers[id(bundle.model)] = DecodeBatcher(bundle, workers=workers,
                                                                switch_interval_ms=switch_interval_ms)
        return found


@dataclass(frozen=True)
class ServerNow:
    """The last minute of one model's decode passes, for the serving page's live panel."""
    passes: int
    tokens: int  # rows served (one token each)
    window_s: float
    by_rows: dict[int, int]  # rows per pass → how many passes
    since_start: Totals = Totals(0, 0, 0)  # every pass since the server started
    others: int = 0  # owners other than the reader (open tabs, running requests) that stepped in the window

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.window_s if self.window_s > 0 else 0.0

    @property
    def shared_share(self) -> float:
        """Share of the tokens that rode in a pass with others."""
        shared = sum(rows * n for rows, n in self.by_rows.items() if rows > 1)
        return shared / self.tokens if self.tokens else 0.0


def server_now(bundle, within_s: float = HISTORY_S, me: object = None) -> ServerNow:
    """What this server's batcher did for ``bundle`` in the last ``within_s`` seconds (a snapshot), and how many
    owners other than ``me`` stepped in that time."""
    found = batcher_for(bundle)
    passes, totals = found.passes(within_s), found.totals()
    by_rows: dict[int, int] = {}
    for p in passes:
        by_rows[p.rows] = by_rows.get(p.rows, 0) + 1
    return ServerNow(len(passes), sum(p.rows for p in passes), within_s, dict(sorted(by_rows.items())), totals,
                     found.others_stepping(me, within_s))
