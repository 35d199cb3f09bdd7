import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui.predict import Live


@pytest.fixture
def live(tiny):
    """The tiny model four greedy steps into "The cat sat", attention captured as the attention page steps."""
    s = Session(tiny, "The cat sat")
    for _ in range(4):
        s.step(SamplingConfig(temperature=0), capture_attention=True)
    return Live(tiny, s, SamplingConfig())
