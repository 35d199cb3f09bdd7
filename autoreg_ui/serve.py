"""Start the app's server: ``python -m autoreg_ui.serve [streamlit run options]``.

It is ``streamlit run app.py`` with one difference. On the first script run after a server starts,
Streamlit checks for a folder named ``pages/`` next to ``app.py`` and, if there is one, runs in its
legacy multipage mode until some visitor's run of ``app.py`` calls ``st.navigation``. A first visitor
arriving by a link to a page (``/attention?layer=3``) would get that page alone: no sidebar settings,
a narrow layout, the file names as navigation. Our navigation is always ``st.navigation``, so we say
so before the first run.
"""
from __future__ import annotations

import sys
import threading
import time

from autoreg_ui.app_files import app_folder

APP = str(app_folder() / "app.py")
ASGI = str(app_folder() / "asgi.py")  # the app with its own routes (the class feed): what the server runs
M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)
ARENAS = 2
TRIM_EVERY_S = 30.0
_trimmer: list[threading.Thread] = []


def tame_malloc(every_s: float | None = None, libc=None) -> bool:
    """Give freed memory back to the system; True when glibc's allocator was found and tamed.

    Why: on a class's server the resident memory rose about 4 MiB a minute over 20 minutes (``bench.soak``).
    ``bench/leak.py``'s probe found Python's traced memory flat (8 MiB) and torch's live tensors
    following the students' texts, while glibc's free-but-held heap rose (141 to 388 MiB in 3 minutes): most
    likely the freed blocks of the students' KV caches (grown a token at a time, dropped at each Reset), spread over one
    arena per thread that ever allocated (up to 8 per core). So: at most ``ARENAS`` arenas (``MALLOC_ARENA_MAX``
    does the same from the environment, set in deploy/Dockerfile), and ``malloc_trim(0)`` every
    ``every_s`` seconds (default: the operator's ``AUTOREG_MALLOC_TRIM_S``, 30; 0 turns both off) returns the free
    pages.
    """
    import ctypes

    from autoreg_server import settings

    every = settings.current().malloc_trim_s if every_s is None else every_s
    if every <= 0:
        return False
    if libc is None:
        try:
            libc = ctypes.CDLL("libc.so.6")
            libc.malloc_trim, libc.mallopt  # noqa: B018 - glibc only (musl and macOS have neither)
        except (OSError, AttributeError):
            return False
    libc.mallopt(M_ARENA_MAX, ARENAS)
    if not _trimmer:
        _trimmer.append(threading.Thread(target=_trim_forever, args=(libc, every), name="malloc-trim", daemon=True))
        _trimmer[0].start()
    return True


def _trim_forever(libc, every: float, rounds: int | None = None) -> None:
    """``malloc_trim(0)`` every ``every`` seconds (``rounds`` times, or for ever)."""
    done = 0
    while rounds is None or done < rounds:
        time.sleep(every)
        libc.malloc_trim(0)
        done += 1


def warm_up() -> None:
    """Before the server answers: import the app's modules, load the embedded model and rebuild the open
    classes' text. Without it the first tab after a (re)start paid for all of it: a teacher reloading after a
    restart waited 7-15 s here (11-27 s on a busier machine) for the class to reappear. ``AUTOREG_WARM=0``
    skips it."""
    import importlib
    import logging
    import pkgutil

    from autoreg_server import settings

    if not settings.current().warm:
        return
    import autoreg_ui

    for module in pkgutil.walk_packages(autoreg_ui.__path__, "autoreg_ui."):
        if module.name != __name__:
            importlib.import_module(module.name)
    from autoreg_core.engine.loading import EMBEDDED_MODEL
    from autoreg_ui.classroom import live
    from autoreg_ui.state import shared_bundle

    try:
        live.warm_classes(shared_bundle(EMBEDDED_MODEL))
    except Exception as exc:  # noqa: BLE001 - the first tab loads the model and says what went wrong
        logging.getLogger(__name__).warning("warm-up skipped: %s", exc)


def main(argv: list[str] | None = None) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from autoreg_server import live_classes

    PagesManager.uses_pages_directory = False
    live_classes.shared()  # the classes' shared state, made before any tab (the first tab would make it too)
    tame_malloc()  # before the model loads and the threads start: they would each take an arena
    warm_up()
    sys.argv = ["streamlit", "run", ASGI, *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
