"""The forward-slot limiter: at most N passes at once through a served bundle's gate."""
import threading
import time
import types

import pytest

from autoreg_core.engine import decode
from autoreg_core.runtime import forward_slots


class _CountingModel:
    """Wraps a model: counts how many calls run at once (each call lasts at least 200 ms)."""

    def __init__(self, model):
        self.model, self.now, self.most, self.lock = model, 0, 0, threading.Lock()

    def forward(self, input_ids=None, logits_to_keep=1, **kwargs):  # the signature decode.forward inspects
        raise NotImplementedError

    def __call__(self, **kwargs):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.2)  # long enough for four threads to overlap even on a loaded machine
        try:
            return self.model(**kwargs)
        finally:
            with self.lock:
                self.now -= 1


@pytest.mark.parametrize("slots, most", [(1, 1), (2, 2), (None, 4)])
def test_forward_slots_bound_how_many_passes_run_at_once(tiny, slots, most):
    counting = _CountingModel(tiny.model)
    bundle = types.SimpleNamespace(model=counting, device=tiny.device, forward_gate=forward_slots.held)
    forward_slots.limit_concurrent_forwards(slots)
    try:
        threads = [threading.Thread(target=decode.forward, args=(bundle, [1, 2, 3])) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        forward_slots.limit_concurrent_forwards(None)
    assert counting.most == most and counting.now == 0


def test_one_forward_limiter_per_process_replaced_only_when_the_setting_changes():
    forward_slots.limit_concurrent_forwards(2)
    first = forward_slots._slots
    forward_slots.limit_concurrent_forwards(2)  # another model loads with the same setting
    assert forward_slots._slots is first
    forward_slots.limit_concurrent_forwards(3)
    assert forward_slots._slots is not first
    forward_slots.limit_concurrent_forwards(None)
    assert forward_slots._slots is None
