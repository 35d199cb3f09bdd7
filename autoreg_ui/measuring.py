"""One measurement at a time per server, and results kept in the tab: the one gate and the one
kept-result scheme every timed measurement of the app uses (the cost race, the inside page's sweeps,
the machine's roofs, the serving experiments).

Many students share one server and one model. A measurement keeps both cores busy for seconds, so
measurements take turns: a process-wide lock lets one run at a time and everyone else waits in line
with a message saying so (the rest of the app keeps answering meanwhile). Results are kept in the
tab's state as they arrive, stamped with what they were measured on: a Stop click (any click reruns
the page and interrupts the run at its next progress update) keeps what was measured. Functions take
the state as a mapping (``st.session_state`` on the page, a dict in tests); only ``run_controls``,
``launch`` and ``show_kept`` draw.
"""
from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass

from autoreg_core.experiments import kv_cost as cost
from autoreg_ui import keys, measuring_text, messages

TIME_BUDGET_S = 150.0  # a measurement never runs longer, whatever the machine's load
WAIT_LIMIT_S = 300.0  # how long a click waits in line before giving up
Progress = Callable[[float, str], None]  # (fraction done, what is being measured)


class Busy(RuntimeError):
    """The line was too long: another measurement kept the model for longer than we wait."""


_GATE = threading.Lock()
_NOW: dict[str, object] = {}  # what is being measured right now: label, since
_LINE = {"waiting": 0}
_LINE_LOCK = threading.Lock()


def running_now() -> str | None:
    """What the server is measuring right now (for the page to say), if anything."""
    return _NOW.get("label")  # type: ignore[return-value]


def queued_message() -> str:
    since = _NOW.get("since")
    ago = time.monotonic() - since if isinstance(since, float) else None
    return measuring_text.queued(_NOW.get("label"), ago, max(0, _LINE["waiting"] - 1))


@contextmanager
def turn(label: str, on_wait: Callable[[str], None] | None = None, limit_s: float = WAIT_LIMIT_S):
    """Hold the server's one measuring slot while the block runs; wait in line (telling ``on_wait``) if taken."""
    if not _GATE.acquire(blocking=False):
        with _LINE_LOCK:
            _LINE["waiting"] += 1
        try:
            deadline = time.monotonic() + limit_s
            while not _GATE.acquire(timeout=1.0):
                if on_wait is not None:
                    on_wait(queued_message())  # a Streamlit call: a Stop click lands here too
                if time.monotonic() > deadline:
                    raise Busy(measuring_text.waited_too_long(limit_s, _NOW.get("label")))
        finally:
            with _LINE_LOCK:
                _LINE["waiting"] -= 1
    _NOW.update(label=label, since=time.monotonic())
    try:
        yield
    finally:
        _NOW.clear()
        _GATE.release()


@dataclass
class Kept:
    """A result kept in the tab, stamped with what it was computed from (model, device, dtype, the
    settings or source it ran on): it is read back only under the same stamp, so a result never
    outlives its inputs, and it survives the rerun that a Stop click makes."""

    stamp: tuple  # any value compared with == (a tuple, or a frozen dataclass such as the race's RaceKey)
    result: object = None
    chosen: object = None  # the learner's settings it was made with (a page may say when they changed)


def stamp(bundle, *parts) -> tuple:
    """What a result was computed on: the model, its device and dtype, and the given settings."""
    from autoreg_core.engine.model_spec import dtype_name

    return (bundle.name, str(bundle.device), dtype_name(bundle.dtype)) + tuple(parts)


def keep(state: MutableMapping, key: str, found: Kept) -> Kept:
    state[key] = found
    return found


def kept(state: MutableMapping, key: str, stamp: tuple | None = None, *, prefix: bool = False,
         kind: type = None) -> Kept | None:
    """The result kept under ``key`` if its stamp is ``stamp`` (or starts with it, ``prefix``), else None."""
    found = state.get(key)
    if not isinstance(found, kind or Kept):
        return None
    if stamp is not None and (found.stamp[:len(stamp)] != tuple(stamp) if prefix else found.stamp != stamp):
        return None
    return found


@dataclass
class Measured(Kept):
    """A timed measurement as it grows: ``result`` is updated after every point, so an interruption keeps
    it. Its stamp is the model's name and the settings it was measured with."""

    label: str = ""
    done: bool = False  # ran to its end (False: stopped by a click, or failed)
    complete: bool = False  # every planned point was measured (False: the time budget ran out)
    failed: bool = False  # refused or failed: the message channel says why
    seconds: float = 0.0
    load: float | None = None  # the machine's 1-minute load average when it ended


def status(found: Measured, cores: int | None = os.cpu_count()) -> list[str]:
    """What the reader should know before trusting a kept result: stopped, cut short, a busy machine."""
    if found.failed:
        return []
    out = []
    if not found.done:
        out.append(measuring_text.STOPPED)
    elif not found.complete:
        out.append(measuring_text.budget_ran_out(TIME_BUDGET_S))
    if found.load is not None and cores and found.load > cores:
        out.append(measuring_text.busy_machine(found.load, cores))
    return out


def measure(state: MutableMapping, key: str, label: str, settings: tuple,
            work: Callable[[Measured, Callable[[], bool]], bool], on_wait: Callable[[str], None] | None = None,
            budget_s: float = TIME_BUDGET_S, wait_s: float = WAIT_LIMIT_S) -> Measured:
    """Run ``work(kept, should_stop)`` in the server's one measuring slot, keeping its result in ``state``.

    ``work`` fills ``kept.result`` as it goes and returns whether every planned point was measured.
    A refused input or a failure becomes a message, never an exception.
    """
    found = Measured(stamp=tuple(settings), label=label)
    state[key] = found
    t0 = time.monotonic()
    try:
        with turn(label, on_wait, wait_s):
            t0 = time.monotonic()
            found.complete = bool(work(found, lambda: time.monotonic() - t0 > budget_s))
            found.done = True
    except Busy as exc:
        found.failed = True
        messages.say(str(exc), "warning", state)
    except ValueError as exc:
        found.failed = True
        messages.say(str(exc), "error", state)
    except Exception as exc:  # noqa: BLE001 - out of memory, an odd architecture ...: a message, not a crash
        found.failed = True
        messages.say(measuring_text.failed(exc), "error", state)
    finally:
        found.seconds, found.load = time.monotonic() - t0, cost.load_average()
        gc.collect()  # model copies made for a measurement go now, not at some later collection
    return found


def run_controls(job: keys.JobKeys, label: str) -> bool:
    """The job's Run button and Stop button (any click stops a run; what was measured is kept)."""
    import streamlit as st

    left, right = st.columns([3, 1])
    run = left.button(label, key=job.run, type="primary")
    right.button("Stop", key=job.stop, disabled=not run, help="Ends the measurement; what was measured is kept.")
    return run


def launch(key: str, label: str, settings: tuple, make_work: Callable[[Progress], Callable]) -> None:
    """Measure with a progress bar, in line behind any other measurement on this server."""
    import streamlit as st

    bar = st.progress(0.0, text="Starting…")
    measure(st.session_state, key, label, settings, make_work(lambda f, text: bar.progress(min(1.0, f), text=text)),
            on_wait=lambda text: bar.progress(0.0, text=text))
    bar.empty()
    messages.show()


def show_kept(key: str, model: str) -> Measured | None:
    """The measurement kept for this model, after what to know before trusting it (None if nothing to show)."""
    import streamlit as st

    found = kept(st.session_state, key, (model,), prefix=True, kind=Measured)
    for warning in status(found) if found is not None else []:
        st.warning(warning)
    return found if found is not None and found.result else None


# ---------------------------------------------------------------- the machine's roofs, shared and kept fresh
ROOFS_FRESH_S = 600.0  # a quiet measurement of the roofs is trusted this long
ROOFS_BUSY_FRESH_S = 60.0  # one taken under load (load average above the cores) only this long


@dataclass(frozen=True)
class Roofs:
    """The machine's two roofs, when they were measured and under what load."""

    bandwidth: float  # copy bandwidth, bytes/s (read + write)
    peak: float  # dense matmul, FLOP/s in the model's dtype
    measured_at: float  # time.time()
    load: float | None  # 1-minute load average right after measuring
    cores: int | None

    @property
    def busy(self) -> bool:
        return self.load is not None and bool(self.cores) and self.load > self.cores

    def stale(self, now: float) -> bool:
        """Too old to trust: older than ``ROOFS_FRESH_S``, or ``ROOFS_BUSY_FRESH_S`` if taken under load."""
        return now - self.measured_at > (ROOFS_BUSY_FRESH_S if self.busy else ROOFS_FRESH_S)


_ROOFS: dict[tuple[str, str], Roofs] = {}
_ROOFS_LOCK = threading.Lock()


def roofs(device: str, dtype: str, *, again: bool = False, now: Callable[[], float] = time.time,
          measure_roofs: Callable[[str, str], tuple[float, float]] | None = None,
          on_wait: Callable[[str], None] | None = None) -> Roofs:
    """The roofs for ``device``/``dtype``: the process's kept ones while fresh, else measured anew through the
    gate (so one measured while another measurement ran, or under load, is not everyone's floor for long)."""
    key = (device, dtype)
    with _ROOFS_LOCK:
        kept_roofs = _ROOFS.get(key)
    if kept_roofs is not None and not again and not kept_roofs.stale(now()):
        return kept_roofs
    measure_roofs = measure_roofs or _measure_roofs
    with turn("this machine's memory bandwidth and matmul speed", on_wait):
        bandwidth, peak = measure_roofs(device, dtype)
        found = Roofs(bandwidth, peak, now(), cost.load_average(), os.cpu_count())
    with _ROOFS_LOCK:
        _ROOFS[key] = found
    return found


def _measure_roofs(device: str, dtype: str) -> tuple[float, float]:
    import torch

    return cost.measure_bandwidth(device), cost.measure_matmul_flops(device, getattr(torch, dtype))
