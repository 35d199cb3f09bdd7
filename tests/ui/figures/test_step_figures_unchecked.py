"""The step page's figures are built without plotly's validation (a click's CPU): each must equal, whole, the same
figure built with validation, including what ``st.plotly_chart`` sends and what the page's later edits make of it."""
import json

import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui.step_figures import logprob_figure, top_of_pipeline, top_of_record, topn_figure, with_click_area


def _sent(fig: go.Figure) -> dict:
    """What st.plotly_chart serialises (its own two calls), read back as data."""
    return json.loads(pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True),
                                  validate=False))


def _validated(fig: go.Figure) -> go.Figure:
    return go.Figure(fig.to_dict())  # every property through plotly's validators (raises on a bad one)


@pytest.fixture
def session(tiny):
    s = Session(tiny, "The cat sat")
    s.generate(5, SamplingConfig(temperature=1.0, top_k=20, seed=3))
    return s


def test_every_step_figure_equals_its_validated_build(tiny, session):
    figures = [topn_figure(tiny.tokenizer, top_of_record(session.records[-1], 15), "Step 5: <b>x</b>"),
               topn_figure(tiny.tokenizer, top_of_record(session.records[0], 3)),
               with_click_area(topn_figure(tiny.tokenizer, top_of_pipeline(session.next_pipeline(SamplingConfig()), 7),
                                           "Candidates")),
               logprob_figure(session.records)]
    for fig in figures:
        checked = _validated(fig)
        assert fig.to_dict() == checked.to_dict()
        assert _sent(fig) == _sent(checked)
        assert [len(t.x) for t in fig.data] == [len(t.x) for t in checked.data]
        assert [list(t.y) for t in fig.data] == [list(t.y) for t in checked.data]


def test_later_edits_still_validate_and_match(tiny, session):
    fig = topn_figure(tiny.tokenizer, top_of_record(session.records[-1], 15), "title")
    checked = _validated(fig)
    for f in (fig, checked):  # what presenter mode does to the step chart
        f.update_layout(height=225, margin=dict(t=75), legend=dict(y=1.0, yanchor="bottom"))
    assert fig.to_dict() == checked.to_dict()
    with pytest.raises(ValueError):  # an update is still checked: only the builders' own dicts skip it
        fig.update_layout(height="tall")
