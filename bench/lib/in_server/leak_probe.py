"""What grows in a server: a thread that writes one JSON line per interval, from the first tab on.

Each line holds what a memory slope needs to be explained: the resident memory, glibc's own account of its heap
(``mallinfo2``: bytes in use by the program vs bytes free but still held by the allocator, which is what
fragmentation looks like), Python's traced memory with the tracebacks that grew most since the previous line and
since the first, the live objects by type that grew, every torch tensor alive (count and bytes of distinct
storages), and per Streamlit session the sizes of its session-state containers. A diagnostic, not a goal:
tracemalloc slows the server (``frames`` 0 leaves it off).
"""
from __future__ import annotations

import collections
import ctypes
import gc
import json
import os
import sys
import threading
import time
import tracemalloc

T0 = time.perf_counter()
MALLINFO2_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                    "keepcost")


class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in MALLINFO2_FIELDS]


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = Mallinfo2
        return libc
    except (OSError, AttributeError):  # not glibc, or one older than 2.33
        return None


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def malloc_state(libc) -> dict | None:
    if libc is None:
        return None
    m = libc.mallinfo2()
    return {"arena_mib": m.arena / 2**20, "mmap_mib": m.hblkhd / 2**20, "in_use_mib": m.uordblks / 2**20,
            "free_held_mib": m.fordblks / 2**20, "mmap_chunks": m.hblks}


def top_growth(diff, n: int = 12) -> list[dict]:
    out = []
    for stat in diff[:n]:
        frames = [f"{fr.filename.rsplit('site-packages/', 1)[-1]}:{fr.lineno}" for fr in stat.traceback]
        out.append({"kib": round(stat.size_diff / 1024, 1), "count": stat.count_diff, "where": frames})
    return out


def live_objects() -> tuple[collections.Counter, dict]:
    """Live objects by type, and torch's tensors: count, distinct storages and their MiB."""
    counts: collections.Counter = collections.Counter()
    tensors, storages, tensor_bytes = 0, set(), 0
    torch = sys.modules.get("torch")  # never imported here
    for o in gc.get_objects():
        counts[type(o).__qualname__] += 1
        if torch is not None and isinstance(o, torch.Tensor):
            tensors += 1
            try:
                s = o.untyped_storage()
                if s.data_ptr() not in storages:
                    storages.add(s.data_ptr())
                    tensor_bytes += s.nbytes()
            except Exception:  # noqa: BLE001 - a tensor without storage (meta, sparse) is skipped
                pass
    return counts, {"tensors": tensors, "storages": len(storages), "tensor_mib": tensor_bytes / 2**20}


def _fields(value) -> dict:
    return getattr(value, "__dict__", None) or {n: getattr(value, n, None) for c in type(value).__mro__
                                                for n in getattr(c, "__slots__", ())}


def sessions() -> dict:
    """Per Streamlit session, the length of each session-state container (one level into those without one)."""
    try:
        infos = runtime()._session_mgr.list_sessions()
    except Exception as exc:  # noqa: BLE001 - Streamlit's internals moved: the line says so
        return {"error": repr(exc)}
    rows = []
    for info in infos:
        sizes = {}
        for name, value in _fields(info.session.session_state).items():
            try:
                sizes[name] = len(value)
            except TypeError:
                for inner, v in _fields(value).items():
                    try:
                        sizes[f"{name}.{inner}"] = len(v)
                    except TypeError:
                        pass
        rows.append(sizes)
    totals: collections.Counter = collections.Counter()
    for r in rows:
        totals.update(r)
    return {"sessions": len(rows), "totals": dict(totals), "max": {k: max(r.get(k, 0) for r in rows) for k in totals}}


def runtime():
    """The server's Runtime once it exists; never imports (an import from this thread while the server's main
    thread imports Streamlit would see half-initialised modules)."""
    module = sys.modules.get("streamlit.runtime.runtime")
    return getattr(getattr(module, "Runtime", None), "_instance", None)


def started() -> bool:
    found = runtime()
    try:
        return found is not None and bool(found._session_mgr.list_sessions())
    except Exception:  # noqa: BLE001 - not ready yet
        return False


def _guard(f):
    try:
        return f()
    except Exception as exc:  # noqa: BLE001 - one broken part of a line does not stop the probe
        return {"error": repr(exc)}


def _grown(counts, before, n: int) -> dict:
    return dict(sorted(((k, counts[k] - before.get(k, 0)) for k in counts), key=lambda kv: -kv[1])[:n])


def watch(log: str, every: float, frames: int) -> None:
    """The probe's loop: wait for the first tab (the model's load and the imports are not what grows), then one
    line every ``every`` seconds."""
    libc = _libc()
    while not started():
        time.sleep(1.0)
    if frames:
        tracemalloc.start(frames)
    first = prev = tracemalloc.take_snapshot() if frames else None
    prev_counts, _ = live_objects()
    first_counts = prev_counts
    while True:
        time.sleep(every)
        try:
            snap = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")]
            ) if frames else None
            counts, tensors = live_objects()
            line = {
                "t": round(time.perf_counter() - T0, 1), "rss_mib": round(rss_mib(), 1),
                "malloc": malloc_state(libc), "traced_mib": tracemalloc.get_traced_memory()[0] / 2**20,
                "tensors": tensors, "sessions": _guard(sessions),
                "objects_grown_since_first": _grown(counts, first_counts, 15),
                "objects_grown_since_prev": _grown(counts, prev_counts, 10),
                "top_since_prev": top_growth(snap.compare_to(prev, "traceback")) if frames else [],
                "top_since_first": top_growth(snap.compare_to(first, "traceback")) if frames else [],
            }
            prev, prev_counts = snap, counts
            with open(log, "a") as f:
                f.write(json.dumps(line, default=str) + "\n")
        except Exception as exc:  # noqa: BLE001 - the error is the line
            with open(log, "a") as f:
                f.write(json.dumps({"error": repr(exc)}) + "\n")


def install(log: str, every: float = 60.0, frames: int = 8) -> None:
    threading.Thread(target=watch, args=(log, every, frames), name="leak-probe", daemon=True).start()
