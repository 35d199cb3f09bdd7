"""Where the app's own files are: ``app.py``, ``pages/``, ``assets/`` and ``.streamlit/config.toml``.

In a checkout they sit at the repository's top (``streamlit run app.py`` works there). An installed wheel has no
such top: its build copies them into ``autoreg_app/`` beside this package (``setup.py``), and Streamlit reads the
config next to the script it runs, so the installed server is the checkout's.
"""
from __future__ import annotations

from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
PACKAGED = TOP / "autoreg_app"  # setup.py's APP_FOLDER


def app_folder() -> Path:
    """The folder holding ``app.py``: the installed copy when there is one, else the checkout's top."""
    return PACKAGED if (PACKAGED / "app.py").is_file() else TOP
