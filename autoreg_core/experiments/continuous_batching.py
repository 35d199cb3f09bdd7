"""Static vs continuous batching: serving a queue of requests on one batched KV cache.

A server holds a batch of ``slots`` rows. **Static batching** fills the slots, then decodes until
the longest member is done: rows that finished early keep their slot (and keep being computed)
while queued requests wait for the whole batch. **Continuous batching** checks the batch after
every decode step: finished rows leave at once and queued requests are prefilled and join the
running batch in their place.

Both are written here on transformers' ``DynamicCache`` with every model call through
``decode.forward``. Rows of different lengths share the cache by left padding: each row's keys
and values sit at the right end, an attention mask hides the padding, and position ids count a
row's real tokens only, so every request computes exactly what it would compute alone (greedy
output equals its solo run; tested). A row that leaves is dropped with the cache's own
``batch_select_indices``; padding columns no row needs any more are trimmed off the left.
(transformers' own continuous batching, ``generate_batch``, uses a paged cache instead and runs
its own forward; the tests compare our tokens with it.)
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import DynamicCache

from autoreg_core.engine import decode
from autoreg_core.engine.config import GREEDY
from autoreg_core.engine.padding import pad_left, rebuild

STATIC, CONTINUOUS = "static", "continuous"
POLICIES = (STATIC, CONTINUOUS)
PREFILL, DECODE, WAITING = "prefill", "decode", "finished, waiting"  # what a slot does in a step
MAX_SLOTS = 16
MAX_REQUESTS = 16
MAX_NEW = 64


@dataclass(frozen=True)
class Request:
    """One request in the queue: its prompt and how many tokens it asks for at most."""

    rid: int
    prompt_ids: tuple[int, ...]
    max_new: int


def check_queue(requests: list[Request], slots: int, max_positions: int) -> None:
    """Raise a ValueError that says what is out of bounds."""
    if not 1 <= slots <= MAX_SLOTS:
        raise ValueError(f"The batch must have 1 to {MAX_SLOTS} slots; got {slots}.")
    if not 1 <= len(requests) <= MAX_REQUESTS:
        raise ValueError(f"The queue must hold 1 to {MAX_REQUESTS} requests; got {len(requests)}.")
    if len({r.rid for r in requests}) != len(requests):
        raise ValueError("Every request needs its own id.")
    for r in requests:
        if not r.prompt_ids:
            raise ValueError(f"Request {r.rid} has an empty prompt.")
        if not 1 <= r.max_new <= MAX_NEW:
            raise ValueError(f"Request {r.rid} asks for {r.max_new} tokens; 1 to {MAX_NEW} are allowed.")
        if len(r.prompt_ids) + r.max_new > max_positions:
            raise ValueError(f"Request {r.rid} needs {len(r.prompt_ids) + r.max_new} positions; "
                             f"the model has {max_positions}.")


# ---------------------------------------------------------------- what a run records
@dataclass
class Served:
    """One request's life in the server (times in ms from the moment every request was queued)."""

    rid: int
    slot: int
    tokens: list[int] = field(default_factory=list)
    joined_step: int = -1
    first_token_ms: float = float("nan")  # time to first token, queueing included
    done_ms: float = float("nan")  # latency: when its last token came out
    finished: bool = False


@dataclass(frozen=True)
class Cell:
    """Slot ``slot`` during step ``step``: which request holds it and what the model does for it."""

    step: int
    slot: int
    rid: int
    kind: str  # PREFILL, DECODE or WAITING


@dataclass
class ServeRun:
    """A whole queue served under one policy: per-request results, the slot timeline, step times."""

    policy: str
    slots: int
    requests: list[Request]
    served: dict[int, Served] = field(default_factory=dict)
    cells: list[Cell] = field(default_factory=list)
    step_end_ms: list[float] = field(default_factory=list)  # wall-clock at the end of every step
    forward_passes: int = 0
    done: bool = False

    @property
    def total_ms(self) -> float:
        return self.step_end_ms[-1] if self.step_end_ms else 0.0

    @property
    def generated(self) -> int:
        return sum(len(s.tokens) for s in self.served.values())

    @property
    def tokens_per_s(self) -> float:
        return self.generated / self.total_ms * 1000.0 if self.total_ms > 0 else float("nan")

    @property
    def wasted_rows(self) -> int:
        """Row-steps spent computing for requests that had already finished (static batching's waste)."""
        return sum(1 for c in self.cells if c.kind == WAITING)

    def finished(self) -> list[Served]:
        return [s for s in self.served.values() if s.finished]


# ---------------------------------------------------------------- the batch of running rows
@dataclass
class _Rows:
    """The running batch: one cache row, one mask row, one next position and last token per request."""

    cache: DynamicCache
    mask: torch.Tensor  # [rows, cached positions], 1 where the position is a real token
    rids: list[int]
    positions: list[int]  # the position id of each row's next token
    last: list[int]  # each row's last token (what the next decode step feeds)


def _left_pad(seqs: list[tuple[int, ...]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(s) for s in seqs)
    ids = torch.tensor([[pad_id] * (width - len(s)) + list(s) for s in seqs], dtype=torch.long)
    mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs], dtype=torch.long)
    return ids, mask


def _join(bundle, rows: _Rows | None, new: _Rows) -> _Rows:
    """The running rows and newly prefilled ones in one cache, left-padded to a common length."""
    if rows is None:
        return new
    width = max(rows.mask.shape[1], new.mask.shape[1])
    layers = [(torch.cat([pad_left(a.keys, width), pad_left(b.keys, width)]),
               torch.cat([pad_left(a.values, width), pad_left(b.values, width)]))
              for a, b in zip(rows.cache.layers, new.cache.layers)]
    mask = torch.cat([pad_left(rows.mask, width), pad_left(new.mask, width)])
    return _Rows(rebuild(bundle, layers), mask, rows.rids + new.rids, rows.positions + new.positions,
                 rows.last + new.last)


def _keep(bundle, rows: _Rows, keep: list[int]) -> _Rows | None:
    """Only the rows at ``keep``; padding columns that no remaining row needs are cut off the left."""
    if not keep:
        return None
    if len(keep) < len(rows.rids):
        rows.cache.batch_select_indices(torch.tensor(keep))
    mask = rows.mask[keep]
    lead = int((mask.cumsum(dim=1) == 0).sum(dim=1).min())
    cache = rows.cache
    if lead:
        cache = rebuild(bundle, [(layer.keys[..., lead:, :], layer.values[..., lead:, :]) for layer in cache.layers])
        mask = mask[:, lead:]
    return _Rows(cache, mask, [rows.rids[i] for i in keep], [rows.positions[i] for i in keep],
                 [rows.last[i] for i in keep])


# ---------------------------------------------------------------- the two model calls of a step
def _prefill(bundle, requests: list[Request]) -> tuple[_Rows, torch.Tensor]:
    """Every joining prompt through the model in one left-padded pass; the logits of each row's next token."""
    ids, mask = _left_pad([r.prompt_ids for r in requests], bundle.pad_id)
    positions = (mask.cumsum(dim=1) - 1).clamp_min(0)
    cache = decode.new_cache(bundle)
    fwd = decode.forward(bundle, ids, cache, attention_mask=mask, position_ids=positions)
    rows = _Rows(fwd.cache, mask, [r.rid for r in requests], [len(r.prompt_ids) for r in requests],
                 [0] * len(requests))
    return rows, fwd.logits


def _decode(bundle, rows: _Rows) -> torch.Tensor:
    """One decode step for every running row: each feeds its last token at its own position."""
    rows.mask = torch.cat([rows.mask, torch.ones(len(rows.rids), 1, dtype=torch.long)], dim=1)
    fwd = decode.forward(bundle, torch.tensor(rows.last).view(-1, 1), rows.cache, attention_mask=rows.mask,
                         position_ids=torch.tensor(rows.positions).view(-1, 1))
    rows.positions = [p + 1 for p in rows.positions]
    return fwd.logits


# ---------------------------------------------------------------- serving a queue
class _Server:
    """The loop's state: queue, running rows, free slots and the run being recorded."""

    def __init__(self, bundle, requests: list[Request], slots: int, policy: str):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}")
        check_queue(requests, slots, bundle.spec.max_positions)
        self.bundle, self.policy = bundle, policy
        self.by_id = {r.rid: r for r in requests}
        self.queue = list(requests)
        self.rows: _Rows | None = None
        self.free = list(range(slots))
        self.eos = set(bundle.eos_token_ids)
        self.run = ServeRun(policy, slots, list(requests))
        self.t0 = time.perf_counter()

    def now(self) -> float:
        return (time.perf_counter() - self.t0) * 1000.0

    def take(self, served: Served, token: int) -> None:
        """A request's new token; it finishes on EOS or at its token budget."""
        served.tokens.append(int(token))
        if len(served.tokens) == 1:
            served.first_token_ms = self.now()
        if int(token) in self.eos or len(served.tokens) >= self.by_id[served.rid].max_new:
            served.finished, served.done_ms = True, self.now()

    def decode_step(self, step: int) -> None:
        logits = _decode(self.bundle, self.rows)
        self.run.forward_passes += 1
        tokens = decode.choose(logits, None, GREEDY).token_id.tolist()
        for i, (rid, token) in enumerate(zip(self.rows.rids, tokens)):
            served = self.run.served[rid]
            self.rows.last[i] = int(token)
            if served.finished:  # static batching: still computed, output thrown away
                self.run.cells.append(Cell(step, served.slot, rid, WAITING))
                continue
            self.run.cells.append(Cell(step, served.slot, rid, DECODE))
            self.take(served, token)

    def retire(self) -> None:
        """Continuous: finished rows leave now. Static: the batch leaves only once all are finished."""
        done = [self.run.served[rid].finished for rid in self.rows.rids]
        if self.policy == STATIC and not all(done):
            return
        self.free = sorted(self.free + [self.run.served[rid].slot for rid, d in zip(self.rows.rids, done) if d])
        self.rows = _keep(self.bundle, self.rows, [i for i, d in enumerate(done) if not d])

    def admit(self, step: int) -> None:
        """Queued requests take the free slots (static: only once the whole batch has left)."""
        if not self.queue or not self.free or (self.policy == STATIC and self.rows is not None):
            return
        joining = [self.queue.pop(0) for _ in range(min(len(self.free), len(self.queue)))]
        new, logits = _prefill(self.bundle, joining)
        self.run.forward_passes += 1
        tokens = decode.choose(logits, None, GREEDY).token_id.tolist()
        for i, (request, token) in enumerate(zip(joining, tokens)):
            served = Served(request.rid, self.free.pop(0), joined_step=step)
            self.run.served[request.rid] = served
            self.run.cells.append(Cell(step, served.slot, request.rid, PREFILL))
            self.take(served, token)
            new.last[i] = int(token)
        self.rows = _join(self.bundle, self.rows, new)
        self.retire()  # a request done at its first token leaves at once (static: if the whole batch is)


def serve(bundle, requests: list[Request], slots: int, policy: str, *,
          on_step: Callable[[ServeRun], None] | None = None,
          should_stop: Callable[[], bool] | None = None) -> ServeRun:
    """Serve every request of the queue (all queued at time 0) greedily under ``policy``.

    A step is one decode pass over the running rows (then finished rows may leave), followed by
    one prefill pass for the requests that join. ``on_step`` sees the run after every step.
    """
    server = _Server(bundle, requests, slots, policy)
    step = 0
    while server.queue or server.rows is not None:
        if should_stop is not None and should_stop():
            break
        if server.rows is not None:
            server.decode_step(step)
            server.retire()
        server.admit(step)
        server.run.step_end_ms.append(server.now())
        step += 1
        if on_step is not None:
            paused = time.perf_counter()
            on_step(server.run)
            server.t0 += time.perf_counter() - paused  # the caller's time (a progress bar) is not the server's
    server.run.done = not server.queue and server.rows is None
    return server.run
