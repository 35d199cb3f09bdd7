"""The follower's last-step chart is a SharedFigure (its dict made once per class step, not deep-copied by every
follower's redraw): what it sends, styles and tabulates must equal, whole, the same chart as a plain figure."""
import json

import plotly.io as pio
import plotly.tools
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui import charts
from autoreg_ui.classroom import student
from autoreg_ui.classroom.figures import SharedFigure


def _sent(fig) -> str:
    """What st.plotly_chart serialises (its own two calls)."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False)


@pytest.fixture
def both(tiny, monkeypatch):
    session = Session(tiny, "The cat sat")
    session.generate(4, SamplingConfig(temperature=1.0, top_k=20, seed=3))
    last = session.records[-1]
    shared = student.last_step_figure(tiny.tokenizer, last)
    monkeypatch.setattr(student, "shared", lambda fig: fig)
    plain = student.last_step_figure(tiny.tokenizer, last)
    return shared, plain


def test_the_shared_chart_sends_what_the_plain_one_sends_on_every_redraw(both):
    shared, plain = both
    assert isinstance(shared, SharedFigure) and not isinstance(plain, SharedFigure)
    expected = _sent(plain)
    assert json.loads(expected)["data"][0]["type"] == "bar" and len(json.loads(expected)["data"]) == 2
    for _ in range(3):  # plotly's JSON writer drops each trace's uid in place: nothing leaks into the next redraw
        assert _sent(shared) == expected
    assert shared.to_dict() == plain.to_dict()
    one, two = shared.to_dict(), shared.to_dict()
    assert one["layout"] is two["layout"]  # made once, not deep-copied per redraw
    assert one["data"][0] is not two["data"][0] and one["data"][0] == two["data"][0]


def test_styled_and_tabulated_the_shared_chart_equals_the_plain_one(both):
    shared, plain = both
    before = _sent(shared)
    for large in (False, True):
        for dark in (False, True):
            assert (charts.style(shared, large=large, dark=dark).to_dict()
                    == charts.style(plain, large=large, dark=dark).to_dict())
    assert charts.figure_table(shared).equals(charts.figure_table(plain))
    assert _sent(shared) == before  # styling made a copy: the shared chart is as it was
