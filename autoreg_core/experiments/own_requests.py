"""A few requests of one's own sent through a server's decode batcher at once, so a learner alone on the server sees
it gather steps into shared passes (the serving page's live panel then counts real passes).

Each request continues the same prompt from a different first token (the prompt's most likely next tokens, in
order) and then greedily, one decode step at a time, on its own copy of the prompt's KV cache. The requests start
together and each names itself as the step's owner, so the batcher treats them as it treats tabs stepping at the
same moment. What comes back is measured: the rows of the pass each step rode in and the passes the batcher ran
while they did (its own count, which would include another tab's passes in that time).
"""
from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass

import torch

from autoreg_core.engine import decode


@dataclass(frozen=True)
class OwnRequests:
    """What the batcher did with the requests: per request, its tokens and the rows of each step's pass."""

    tokens: list[list[int]]  # per request: the first token fed, then each greedy token
    rows: list[list[int]]  # per request, per step: rows in the pass that step rode in
    passes: int  # passes the batcher ran from the first ask to the last answer
    seconds: float
    started: float  # time.time() just before the first ask: every pass the requests rode in ended after it

    @property
    def requests(self) -> int:
        return len(self.rows)

    @property
    def steps(self) -> int:
        return sum(len(r) for r in self.rows)

    @property
    def largest_pass(self) -> int:
        return max((n for r in self.rows for n in r), default=0)


class _Request:
    """A request's name in the batcher (weakly referenced: once the request ends it stops counting as stepping)."""


def send_own_requests(bundle, batcher, prompt_ids: list[int], requests: int, steps: int) -> OwnRequests:
    """``requests`` requests of ``steps`` decode steps each on ``prompt_ids``, all asked of ``batcher`` at once."""
    if requests < 1 or steps < 1 or not prompt_ids:
        raise ValueError("At least one request of one step on a prompt of at least one token.")
    cache = decode.new_cache(bundle)
    first = decode.forward(bundle, [list(prompt_ids)], cache).logits[0]
    starts = torch.topk(first.float(), requests).indices.tolist()
    tokens: list[list[int]] = [[int(t)] for t in starts]
    rows: list[list[int]] = [[] for _ in starts]
    errors: list[BaseException] = []
    ready = threading.Barrier(requests)

    def run(i: int) -> None:
        own, me = copy.deepcopy(cache), _Request()
        try:
            ready.wait(timeout=30)
            for n in range(steps):
                shared = batcher.decode(own, tokens[i][-1], owner=me)
                rows[i].append(shared.rows)
                if n + 1 < steps:
                    tokens[i].append(int(torch.argmax(shared.logits)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            errors.append(exc)

    before, started, t0 = batcher.totals().passes, time.time(), time.perf_counter()
    threads = [threading.Thread(target=run, args=(i,), name="autoreg-own-request") for i in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return OwnRequests(tokens, rows, batcher.totals().passes - before, time.perf_counter() - t0, started)
