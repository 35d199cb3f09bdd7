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
from pathlib import Path

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def warm_up() -> None:
    """Before the server answers: import the app's modules, load the embedded model and rebuild the open
    classes' text. Without it the first tab after a (re)start paid for all of it: a teacher reloading after a
    restart waited 7-15 s here (11-27 s on a busier machine) for the class to reappear. ``AUTOREG_WARM=0``
    skips it."""
    import importlib
    import logging
    import os
    import pkgutil

    if os.environ.get("AUTOREG_WARM", "1") == "0":
        return
    import autoreg_ui

    for module in pkgutil.walk_packages(autoreg_ui.__path__, "autoreg_ui."):
        if module.name != __name__:
            importlib.import_module(module.name)
    from autoreg_core.loading import EMBEDDED_MODEL
    from autoreg_ui.classroom import live
    from autoreg_ui.state import shared_bundle

    try:
        live.warm_classes(shared_bundle(EMBEDDED_MODEL))
    except Exception as exc:  # noqa: BLE001 - the first tab loads the model and says what went wrong
        logging.getLogger(__name__).warning("warm-up skipped: %s", exc)


def main(argv: list[str] | None = None) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    warm_up()
    sys.argv = ["streamlit", "run", APP, *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
