"""The one measuring gate and the one kept-result scheme, without Streamlit (plain dicts as state)."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import pytest
from tiny import tiny_bundle

from autoreg_core.experiments import serving_measurements as measurements
from autoreg_ui import measuring, measuring_text, messages
from autoreg_ui.lessons.cost import controller as cost


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


# ---------------------------------------------------------------- one measurement at a time per server
@contextmanager
def held_by_another_tab(label: str, seconds: float = 10.0):
    """Another tab holds the server's measuring slot until the block ends (or ``seconds`` pass)."""
    holding, release = threading.Event(), threading.Event()

    def other_tab():
        with measuring.turn(label):
            holding.set()
            release.wait(seconds)

    thread = threading.Thread(target=other_tab)
    thread.start()
    holding.wait(seconds)
    try:
        yield release
    finally:
        release.set()
        thread.join(seconds)


def test_a_second_measurement_waits_in_line_and_says_so():
    waited = []
    with held_by_another_tab("batching curve") as release:
        assert measuring.running_now() == "batching curve"
        threading.Timer(1.5, release.set).start()
        with measuring.turn("precision table", on_wait=waited.append):
            assert measuring.running_now() == "precision table"
    assert measuring.running_now() is None
    assert waited and "Another measurement is running on this server (batching curve" in waited[0]
    assert "yours is queued" in waited[0]


def test_waiting_too_long_gives_up_with_a_message():
    state, ran = {}, []
    with held_by_another_tab("speculative decoding"):
        with pytest.raises(measuring.Busy, match="Waited 0 s"):
            with measuring.turn("mine", limit_s=0.2):
                ran.append("turn")
        found = measuring.measure(state, "k", "mine", (), lambda f, stop: ran.append("measure"), wait_s=0.2)
    assert ran == [] and found.failed and not found.done
    assert messages.take(state) == [("warning", "Waited 0 s for the measurement in progress (speculative decoding); "
                                                "please try again in a minute.")]


def test_measure_keeps_results_and_says_how_it_ended():
    state = {}

    def work(found, should_stop):
        found.result = [1, 2]
        return True

    found = measuring.measure(state, "k", "label", ("model a", 16), work)
    assert measuring.kept(state, "k", ("model a",), prefix=True) is found and found.done and found.complete
    assert measuring.kept(state, "k", ("model b",), prefix=True) is None
    assert measuring.status(found, cores=1_000_000) == []
    budget = measuring.measure(state, "k", "label", ("a",), lambda f, stop: not stop(), budget_s=-1)
    assert budget.done and not budget.complete
    assert measuring.status(budget, cores=1_000_000) == [
        "The 150 s time budget ran out before the end: only part was measured."]
    budget.load = 9.5
    assert "busy during this measurement (load average 9.5 on 2 cores)" in measuring.status(budget, cores=2)[1]


def test_a_stop_click_keeps_what_was_measured():
    """Streamlit interrupts a run by raising a BaseException (StopException) at the next progress call."""
    class Interrupted(BaseException):
        pass

    state = {}

    def work(found, should_stop):
        found.result = ["first point"]
        raise Interrupted

    with pytest.raises(Interrupted):
        measuring.measure(state, "k", "label", (), work)
    found = measuring.kept(state, "k")
    assert found.result == ["first point"] and not found.done
    assert measuring.status(found, cores=1_000_000) == [
        "Stopped before the end: what was measured is shown; run again for the rest."]
    assert measuring.running_now() is None  # the line moves on


def test_bad_input_and_failures_become_messages():
    state = {}
    measuring.measure(state, "k", "label", (), lambda f, stop: measurements.demo_queue(tiny_bundle(), 99, 8))
    measuring.measure(state, "j", "label", (), lambda f, stop: 1 / 0)
    said = messages.take(state)
    assert said[0] == ("error", "Queue 1 to 16 requests; got 99.")
    assert said[1][0] == "error" and "ZeroDivisionError" in said[1][1]
    assert measuring.kept(state, "k").failed and measuring.status(measuring.kept(state, "k"), cores=1) == []
