"""What grows in a bench server: a probe installed in the server (PYTHONPATH, as ``sitecustomize``, the way
``bench/capacity.py`` installs RUN_TIMER) that writes one JSON line per interval to ``AUTOREG_LEAK_LOG``.

Each line holds what a memory slope needs to be explained: the resident memory, glibc's own account of its heap
(``mallinfo2``: bytes in use by the program vs bytes free but still held by the allocator, which is what
fragmentation looks like), Python's traced memory with the tracebacks that grew most since the previous line and
since the first, the live objects by type that grew, every torch tensor alive (count and bytes of distinct
storages), and per Streamlit session the sizes of its session-state containers. Used by ``bench.soak --leak DIR``;
``summarise`` reads the log back. A diagnostic, not a goal: tracemalloc slows the server.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

PROBE = r'''
import os

_LOG = os.environ.get("AUTOREG_LEAK_LOG")
if _LOG:
    import collections
    import ctypes
    import gc
    import json
    import sys
    import threading
    import time
    import tracemalloc

    _EVERY = float(os.environ.get("AUTOREG_LEAK_EVERY", "60"))
    _T0 = time.perf_counter()

    class _Mallinfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        _libc = ctypes.CDLL("libc.so.6")
        _libc.mallinfo2.restype = _Mallinfo2
    except (OSError, AttributeError):
        _libc = None

    def _rss_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    def _malloc():
        if _libc is None:
            return None
        m = _libc.mallinfo2()
        return {"arena_mib": m.arena / 2**20, "mmap_mib": m.hblkhd / 2**20, "in_use_mib": m.uordblks / 2**20,
                "free_held_mib": m.fordblks / 2**20, "mmap_chunks": m.hblks}

    def _top(diff, n=12):
        out = []
        for stat in diff[:n]:
            frames = [f"{fr.filename.rsplit('site-packages/', 1)[-1]}:{fr.lineno}" for fr in stat.traceback]
            out.append({"kib": round(stat.size_diff / 1024, 1), "count": stat.count_diff, "where": frames})
        return out

    def _objects():
        counts = collections.Counter()
        tensors, storages, tensor_bytes = 0, set(), 0
        torch = sys.modules.get("torch")
        for o in gc.get_objects():
            counts[type(o).__qualname__] += 1
            if torch is not None and isinstance(o, torch.Tensor):
                tensors += 1
                try:
                    s = o.untyped_storage()
                    if s.data_ptr() not in storages:
                        storages.add(s.data_ptr())
                        tensor_bytes += s.nbytes()
                except Exception:
                    pass
        return counts, {"tensors": tensors, "storages": len(storages), "tensor_mib": tensor_bytes / 2**20}

    def _sessions():
        try:
            infos = _runtime()._session_mgr.list_sessions()
        except Exception as exc:
            return {"error": repr(exc)}
        rows = []
        for info in infos:
            state = info.session.session_state
            sizes = {}
            fields = getattr(state, "__dict__", None) or {n: getattr(state, n, None)
                                                           for c in type(state).__mro__
                                                           for n in getattr(c, "__slots__", ())}
            for name, value in fields.items():
                try:
                    sizes[name] = len(value)
                except TypeError:
                    inner = getattr(value, "__dict__", None) or {n: getattr(value, n, None)
                                                                 for c in type(value).__mro__
                                                                 for n in getattr(c, "__slots__", ())}
                    for n2, v2 in inner.items():
                        try:
                            sizes[f"{name}.{n2}"] = len(v2)
                        except TypeError:
                            pass
            rows.append(sizes)
        totals = collections.Counter()
        for r in rows:
            totals.update(r)
        return {"sessions": len(rows), "totals": dict(totals),
                "max": {k: max(r.get(k, 0) for r in rows) for k in totals}}

    def _runtime():
        """The server's Runtime once it exists; never imports (an import from this thread while the server's
        main thread imports Streamlit would see half-initialised modules)."""
        module = sys.modules.get("streamlit.runtime.runtime")
        return getattr(getattr(module, "Runtime", None), "_instance", None)

    def _started():
        runtime = _runtime()
        try:
            return runtime is not None and bool(runtime._session_mgr.list_sessions())
        except Exception:
            return False

    def _guard(f):
        try:
            return f()
        except Exception as exc:
            return {"error": repr(exc)}

    def _loop():
        while not _started():  # the model's load and the imports are not what grows: trace from the first tab
            time.sleep(1.0)
        frames = int(os.environ.get("AUTOREG_LEAK_FRAMES", "8"))  # 0: no tracemalloc (it slows the server)
        if frames:
            tracemalloc.start(frames)
        first = prev = tracemalloc.take_snapshot() if frames else None
        prev_counts, _ = _objects()
        first_counts = prev_counts
        while True:
            time.sleep(_EVERY)
            try:
                snap = tracemalloc.take_snapshot().filter_traces(
                    [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")]
                ) if frames else None
                counts, tensors = _objects()
                grew = {k: counts[k] - first_counts.get(k, 0) for k in counts}
                line = {
                    "t": round(time.perf_counter() - _T0, 1), "rss_mib": round(_rss_mib(), 1),
                    "malloc": _malloc(), "traced_mib": tracemalloc.get_traced_memory()[0] / 2**20,
                    "tensors": tensors, "sessions": _guard(_sessions),
                    "objects_grown_since_first": dict(sorted(grew.items(), key=lambda kv: -kv[1])[:15]),
                    "objects_grown_since_prev": dict(sorted(((k, counts[k] - prev_counts.get(k, 0)) for k in counts),
                                                            key=lambda kv: -kv[1])[:10]),
                    "top_since_prev": _top(snap.compare_to(prev, "traceback")) if frames else [],
                    "top_since_first": _top(snap.compare_to(first, "traceback")) if frames else [],
                }
                prev, prev_counts = snap, counts
                with open(_LOG, "a") as f:
                    f.write(json.dumps(line, default=str) + "\n")
            except Exception as exc:
                with open(_LOG, "a") as f:
                    f.write(json.dumps({"error": repr(exc)}) + "\n")

    threading.Thread(target=_loop, name="leak-probe", daemon=True).start()
'''


def probe_env(folder: Path, every: float = 60.0, frames: int = 8) -> dict:
    """The environment that makes a bench server write the probe's lines to ``folder/leak.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(PROBE)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "AUTOREG_LEAK_LOG": str(folder / "leak.jsonl"),
            "AUTOREG_LEAK_EVERY": str(every), "AUTOREG_LEAK_FRAMES": str(frames)}


def summarise(folder: Path) -> list[dict]:
    """Per probe line: time, RSS, glibc in-use and free-held heap, traced Python memory, tensors, sessions."""
    rows = []
    log = folder / "leak.jsonl"
    for text in (log.read_text().splitlines() if log.exists() else []):
        line = json.loads(text)
        if "error" in line:
            rows.append(line)
            continue
        m = line["malloc"] or {}
        rows.append({"t": line["t"], "rss": line["rss_mib"], "heap_in_use": round(m.get("in_use_mib", 0), 1),
                     "heap_free_held": round(m.get("free_held_mib", 0), 1), "mmap": round(m.get("mmap_mib", 0), 1),
                     "traced": round(line["traced_mib"], 1), "tensor_mib": round(line["tensors"]["tensor_mib"], 1),
                     "tensors": line["tensors"]["tensors"], "sessions": line["sessions"].get("sessions")})
    return rows


if __name__ == "__main__":
    import sys

    for row in summarise(Path(sys.argv[1])):
        print(json.dumps(row))
