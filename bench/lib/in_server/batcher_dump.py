"""Where a decode step's time went in the server: every loaded model's batcher breakdown, written as it exits."""
from __future__ import annotations

import atexit
import json
import sys


def install(path: str) -> None:
    def dump() -> None:
        found = sys.modules.get("autoreg_core.runtime.batcher")  # never imported here: only read if the app did
        if found is not None:
            with open(path, "w") as out:
                json.dump([b.breakdown().means() for b in list(found._batchers.values())], out)

    atexit.register(dump)  # the server is stopped with SIGTERM: Streamlit exits, atexit runs
