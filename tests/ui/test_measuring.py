"""The one measuring gate and the one kept-result scheme, without Streamlit (plain dicts as state)."""
import threading
import time

import pytest

from autoreg_ui import cost, measuring, measuring_text


def test_a_kept_result_is_read_back_only_under_its_own_stamp(tiny):
    state = {}
    on = measuring.stamp(tiny, (1, 2, 3), 8)
    assert on[:1] == (tiny.name,) and len(on) == 5
    measuring.keep(state, "k", measuring.Kept(on, "result", chosen="settings"))
    assert measuring.kept(state, "k", on).result == "result"
    assert measuring.kept(state, "k", measuring.stamp(tiny, (1, 2, 3), 9)) is None
    assert measuring.kept(state, "k", (tiny.name,), prefix=True).chosen == "settings"
    assert measuring.kept(state, "k", on, kind=measuring.Measured) is None  # a plain Kept is not a measurement
    assert measuring.kept(state, "other", on) is None


def test_the_race_waits_for_the_gate_like_every_measurement(tiny):
    """While another measurement holds the gate, the race waits in line (and hears why), then runs."""
    heard, state = [], {}
    key = cost.RaceKey.of(tiny, 16)
    holding = threading.Event()

    def other() -> None:
        with measuring.turn("someone else's sweep"):
            holding.set()
            time.sleep(1.5)

    thread = threading.Thread(target=other)
    thread.start()
    holding.wait()
    result = cost.run(state, tiny, key, on_wait=heard.append, cached_repeats=(1, 1), naive_repeats=(1, 1))
    thread.join()
    assert heard and heard[0].startswith("Another measurement is running on this server (someone else's sweep")
    assert result is not None and [p.length for p in result.points] == result.lengths
    assert measuring.running_now() is None


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_roofs_are_kept_while_fresh_and_measured_again_when_stale(monkeypatch):
    monkeypatch.setattr(measuring, "_ROOFS", {})
    calls, clock = [], Clock()
    monkeypatch.setattr(measuring.cost, "load_average", lambda: 0.5)

    def fake(device, dtype):
        calls.append(clock.t)
        return 10e9 + len(calls), 50e9

    first = measuring.roofs("cpu", "float32", now=clock, measure_roofs=fake)
    clock.t += measuring.ROOFS_FRESH_S - 1
    assert measuring.roofs("cpu", "float32", now=clock, measure_roofs=fake) is first and len(calls) == 1
    clock.t += 2
    again = measuring.roofs("cpu", "float32", now=clock, measure_roofs=fake)
    assert again.bandwidth == 10e9 + 2 and len(calls) == 2
    assert measuring.roofs("cpu", "float32", again=True, now=clock, measure_roofs=fake).bandwidth == 10e9 + 3


def test_roofs_taken_under_load_are_trusted_only_briefly(monkeypatch):
    monkeypatch.setattr(measuring, "_ROOFS", {})
    clock = Clock()
    monkeypatch.setattr(measuring.cost, "load_average", lambda: 64.0)
    monkeypatch.setattr(measuring.os, "cpu_count", lambda: 2)
    busy = measuring.roofs("cpu", "float32", now=clock, measure_roofs=lambda d, t: (1e9, 1e9))
    assert busy.busy and busy.stale(clock.t + measuring.ROOFS_BUSY_FRESH_S + 1)
    assert not busy.stale(clock.t + measuring.ROOFS_BUSY_FRESH_S - 1)
    assert "busy then (load 64.0 on 2 cores)" in measuring_text.roofs_caption(3.0, busy.load, busy.cores)
    assert measuring_text.roofs_caption(3.0, 0.1, 2) == "Bandwidth and matmul peak measured on this server just now."
    assert measuring_text.roofs_caption(300.0, 0.1, 2).endswith("5 min ago.")


def test_a_long_wait_gives_up_with_a_message():
    with measuring.turn("first"):
        with pytest.raises(measuring.Busy, match="Waited 0 s for the measurement in progress \\(first\\)"):
            with measuring.turn("second", limit_s=0.2):
                pass
