"""The follower's last-step chart is a SharedFigure (its dict made once per class step, not deep-copied by every
follower's redraw): what it sends, styles and tabulates must equal, whole, the same chart as a plain figure."""
import json

import plotly.io as pio
import plotly.tools
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui import charts
from autoreg_ui.classroom import feed_view
from autoreg_ui.classroom.figures import SharedFigure


def _sent(fig) -> str:
    """What st.plotly_chart serialises (its own two calls)."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False)


@pytest.fixture
def both(tiny, monkeypatch):
    session = Session(tiny, "The cat sat")
    session.generate(4, SamplingConfig(temperature=1.0, top_k=20, seed=3))
    last = session.records[-1]
    shared = feed_view.last_step_figure(tiny.tokenizer, last)
    monkeypatch.setattr(feed_view, "shared", lambda fig: fig)
    plain = feed_view.last_step_figure(tiny.tokenizer, last)
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


def test_framing_leaves_the_shared_chart_as_it_is_and_frames_a_plain_one(both):
    """show_chart frames what it draws; a shared chart is drawn by every follower's thread at once, so framing
    it must not edit it (two threads editing one plotly figure broke its dicts mid-iteration)."""
    shared, plain = both
    before, layout_before = _sent(shared), shared.layout.to_plotly_json()
    for large in (False, True):
        drawn, _ = charts.framed(charts.style(shared, large=large, dark=False), large=large)
        assert (drawn is shared) is (not large)
    assert _sent(shared) == before and shared.layout.to_plotly_json() == layout_before
    plain_before = plain.layout.to_plotly_json()
    charts.framed(plain)
    assert plain.layout.to_plotly_json() != plain_before  # the other side: a plain figure is framed in place


def test_many_threads_draw_the_shared_chart_at_once(both):
    import threading

    shared, _ = both
    expected, errors = _sent(shared), []

    def draw():
        try:
            for _ in range(40):
                shown, _ = charts.framed(charts.style(shared, large=False, dark=False))
                assert _sent(shown) == expected
        except Exception as error:  # noqa: BLE001 - any failure in a thread is the test's failure
            errors.append(repr(error))

    threads = [threading.Thread(target=draw) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
