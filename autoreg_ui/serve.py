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


def main(argv: list[str] | None = None) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", APP, *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
