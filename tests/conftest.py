import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tiny import tiny_bundle  # noqa: E402


@pytest.fixture(scope="session")
def tiny():
    """A tiny random Llama bundle (fast)."""
    return tiny_bundle()


@pytest.fixture(scope="session")
def embedded():
    """The embedded SmolLM2-135M-Instruct, converted once into the cache dir."""
    from autoreg_core import load_model

    return load_model()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "embedded" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


def _keep_streamlit_on_navigation() -> None:
    """Work around an AppTest quirk: it resets ``PagesManager.uses_pages_directory`` before every run,
    and because our page files live in ``pages/`` it then re-detects the legacy (v1) multipage
    mode and runs the page file alone on reruns, skipping ``app.py`` and its sidebar. A real server
    sets the flag to False as soon as ``st.navigation`` runs; we pin it the same way."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


_keep_streamlit_on_navigation()
