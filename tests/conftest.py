import os
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
