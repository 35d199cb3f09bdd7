"""What grows in a bench server, read back: the lines the leak probe (``bench.lib.in_server.leak_probe``, installed
in the server by ``bench.lib.server_hooks.leak_probe_env``) wrote, one per interval.

    python -m bench.leak DIR

Each line holds what a memory slope needs to be explained: the resident memory, glibc's own account of its heap
(``mallinfo2``: bytes in use by the program vs bytes free but still held by the allocator, which is what
fragmentation looks like), Python's traced memory with the tracebacks that grew most since the previous line and
since the first, the live objects by type that grew, every torch tensor alive (count and bytes of distinct
storages), and per Streamlit session the sizes of its session-state containers. ``bench.soak --leak DIR`` installs it;
``summarise`` reads the log back. A diagnostic, not a goal: tracemalloc slows the server.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


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
    for row in summarise(Path(sys.argv[1])):
        print(json.dumps(row))
