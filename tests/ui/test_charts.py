"""show_chart: presenter styling (pure), the PNG/SVG buttons, and the charts kept for the hand-out."""
from collections import OrderedDict

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots
from streamlit.testing.v1 import AppTest

from autoreg_ui import charts, keys


def _figure() -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("left", "right"))
    fig.add_bar(x=["a", "b"], y=[1, 2], text=["1", "2"], row=1, col=1)
    fig.add_heatmap(z=[[1, 2], [3, 4]], row=1, col=2)
    fig.update_layout(height=300, title="A chart", plot_bgcolor="white")
    fig.update_xaxes(tickfont_size=9)
    return fig


def test_normal_mode_shows_the_figure_as_built():
    fig = _figure()
    assert charts.style(fig, large=False, dark=False) is fig


def test_large_type_reaches_every_axis_tick_title_annotation_and_colorbar():
    fig = _figure()
    before = fig.to_dict()
    big = charts.style(fig, large=True, dark=False)
    assert fig.to_dict() == before  # the page's figure is not changed
    L = charts.LARGE
    assert (big.layout.font.size, big.layout.title.font.size, big.layout.legend.font.size) == (L["font"], L["title"],
                                                                                              L["legend"])
    axes = [big.layout.xaxis, big.layout.xaxis2, big.layout.yaxis, big.layout.yaxis2]
    assert [a.tickfont.size for a in axes] == [L["ticks"]] * 4
    assert [a.title.font.size for a in axes] == [L["axis_title"]] * 4
    assert [a.font.size for a in big.layout.annotations] == [L["annotations"]] * 2
    assert big.data[0].textfont.size == L["text"] and big.data[1].colorbar.tickfont.size == L["ticks"]
    assert big.layout.height == 375 and big.layout.plot_bgcolor == "white"


def test_dark_clears_a_background_the_figure_set_itself():
    dark = charts.style(_figure(), large=False, dark=True)
    assert (dark.layout.paper_bgcolor, dark.layout.plot_bgcolor) == (charts.TRANSPARENT, charts.TRANSPARENT)
    assert dark.layout.font.size is None
    plain = go.Figure(go.Bar(y=[1]))
    assert charts.style(plain, large=False, dark=True) is plain  # Streamlit's theme darkens it already


def test_file_names_are_safe_and_say_what_they_hold():
    assert charts.file_name("step-3-top-tokens") == "autoreg-step-3-top-tokens"
    assert charts.file_name("../x y<script>") == "autoreg-x-y-script"
    assert charts.file_name("autoreg-roofline") == "autoreg-roofline"
    assert charts.file_name("???") == "autoreg-chart"
    assert charts.chart_config("autoreg-roofline") == {
        "displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": "autoreg-roofline", "scale": 2}}


def test_export_buttons_name_the_chart_as_streamlit_names_its_container():
    html = charts.export_buttons_html("att.bar chart", 'autoreg-"x"')
    assert html.count("<button") == 2
    assert 'data-autoreg-chart="att-bar-chart" data-format="png" data-filename="autoreg-&quot;x&quot;"' in html
    assert 'data-format="svg"' in html and "<script" not in html  # the handler is installed once per page
    assert "Plotly.downloadImage" in charts.EXPORT_JS and "button[data-autoreg-chart]" in charts.EXPORT_JS


def test_the_hand_out_keeps_the_newest_chart_of_each_kind():
    state = {}
    figs = [go.Figure(go.Bar(y=[i])) for i in range(charts.KEEP_CHARTS + 3)]
    for i, fig in enumerate(figs):
        charts.remember(state, f"chart-{chr(97 + i)}", fig)
    charts.remember(state, "chart-e", figs[0])  # shown again: newest now
    charts.remember(state, "step-3-top", figs[1])
    charts.remember(state, "step-4-top", figs[2])  # the same kind, a later step: replaces step 3
    kept = charts.kept_charts(charts.kept_store(state))
    names = [chr(97 + i) for i in range(5, charts.KEEP_CHARTS + 3) if i != 4]
    assert [name for name, _ in kept] == [f"chart-{c}" for c in names] + ["chart-e", "step-4-top"]
    assert len(kept) == charts.KEEP_CHARTS and kept[-2][1] is figs[0] and kept[-1][1] is figs[2]
    assert isinstance(state[keys.HANDOUT_CHARTS], OrderedDict)
    assert len(state[keys.HANDOUT_CHARTS]) == charts.KEEP_CHARTS  # the store itself stays bounded


def _app():
    import plotly.graph_objects as go
    import streamlit as st

    from autoreg_ui import keys
    from autoreg_ui.charts import show_chart

    st.session_state.setdefault(keys.PRESENT, False)
    st.toggle("present", key=keys.PRESENT)
    fig = go.Figure(go.Bar(x=["a"], y=[1]))
    fig.update_xaxes(tickfont_size=9)
    left, _ = st.columns(2)
    show_chart(fig, key="demo_chart", filename="demo", where=left)
    show_chart(fig, key="live_chart", filename="live", export=False, keep=False)


def test_show_chart_in_a_page():
    import json

    at = AppTest.from_function(_app).run()
    assert not at.exception
    specs = {c.proto.id.split("-")[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert set(specs) == {"demo_chart", "live_chart"}
    assert specs["demo_chart"]["layout"]["xaxis"]["tickfont"]["size"] == 9
    bodies = [h.proto.body for h in at.get("html")]
    assert len(bodies) == 1 and 'data-autoreg-chart="demo_chart"' in bodies[0]
    assert [name for name, _ in at.session_state[keys.HANDOUT_CHARTS].values()] == ["autoreg-demo"]
    at.toggle(key=keys.PRESENT).set_value(True).run()
    specs = {c.proto.id.split("-")[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert specs["demo_chart"]["layout"]["xaxis"]["tickfont"]["size"] == charts.LARGE["ticks"]
    assert specs["live_chart"]["layout"]["font"]["size"] == charts.LARGE["font"]


def test_figure_table_holds_every_bar_of_a_chart_under_its_axis_titles():
    from autoreg_ui.charts import figure_table

    fig = go.Figure(data=[go.Bar(name="before", x=["a", "b", "c"], y=[0.5, 0.3, 0.2]),
                          go.Bar(name="after", x=["a", "b", "c"], y=[0.6, 0.4, 0.0])],
                    layout=dict(xaxis=dict(title=dict(text="token")), yaxis=dict(title=dict(text="probability"))))
    table = figure_table(fig)
    assert list(table.columns) == ["series", "token", "probability"]
    assert table.values.tolist() == [["before", "a", 0.5], ["before", "b", 0.3], ["before", "c", 0.2],
                                     ["after", "a", 0.6], ["after", "b", 0.4], ["after", "c", 0.0]]


def test_figure_table_of_a_heatmap_has_one_row_per_cell():
    from autoreg_ui.charts import figure_table

    fig = go.Figure(go.Heatmap(z=np.array([[1.0, 0.0], [0.25, 0.75]]), x=["k0", "k1"], y=["q0", "q1"]))
    table = figure_table(fig)
    assert list(table.columns) == ["x", "y", "value"]
    assert table.values.tolist() == [["k0", "q0", 1.0], ["k1", "q0", 0.0], ["k0", "q1", 0.25], ["k1", "q1", 0.75]]


def test_every_figure_the_step_page_draws_becomes_a_table_of_its_values(tiny):
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.charts import figure_table
    from autoreg_ui.step_figures import logprob_figure, top_of_record, topn_figure

    s = Session(tiny, "The cat sat")
    for _ in range(3):
        s.step(SamplingConfig(temperature=0))
    bars = figure_table(topn_figure(tiny.tokenizer, top_of_record(s.records[-1], 5)))
    assert len(bars) == 2 * len(topn_figure(tiny.tokenizer, top_of_record(s.records[-1], 5)).data[0].x)
    chain = figure_table(logprob_figure(s.records))
    assert chain["nats"].tolist()[:3] == pytest.approx([r.logprob for r in s.records])
