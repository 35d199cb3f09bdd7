"""The one build step pyproject.toml cannot say: a wheel carries the Streamlit app's own files.

``app.py``, ``pages/``, ``assets/`` and ``.streamlit/config.toml`` stay at the repository's top, where
``streamlit run app.py`` and the design want them. They are not a package, so the wheel would leave them out and an
installed ``autoreg`` would have nothing to serve: the build copies them, folders whole, into ``autoreg_app/`` beside
the packages, where ``autoreg_ui.app_files`` looks for them in an installed copy.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TOP = Path(__file__).resolve().parent
APP_FOLDER = "autoreg_app"  # the name autoreg_ui/app_files.py looks for
APP_FILES = ("app.py", "asgi.py", "pages", "assets", ".streamlit/config.toml")


class BuildWithAppFiles(build_py):
    """setuptools' build_py, then the app's files copied into the build (an editable install serves the checkout)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / APP_FOLDER
        for name in APP_FILES:
            source, copy = TOP / name, target / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, copy, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, copy)


setup(cmdclass={"build_py": BuildWithAppFiles})
