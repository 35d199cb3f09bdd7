"""The one layout rule every chart goes through (charts.framed), checked on figures without a browser."""
import plotly.graph_objects as go
import pytest

from autoreg_ui import charts


def _two_bars(**layout) -> go.Figure:
    return go.Figure([go.Bar(x=["a", "b"], y=[1, 2], name="before"), go.Bar(x=["a", "b"], y=[2, 1], name="after")],
                     layout=dict(height=300, **layout))


def test_a_two_line_title_keeps_its_first_line_and_gives_the_rest_as_a_caption():
    fig, details = charts.framed(_two_bars(title="Step 3: greedy<br>(0.5 after the filters)"))
    assert (fig.layout.title.text, details) == ("Step 3: greedy", "0.5 after the filters")
    assert charts.framed(fig)[1] == "0.5 after the filters"  # drawn again, the caption is kept
    assert charts.split_title("One line") == ("One line", "")
    assert charts.split_title("A<br>model (batch 1)") == ("A", "model (batch 1)")  # not a bracketed aside


def test_the_legend_sits_in_its_own_row_between_the_title_and_the_plot():
    fig, _ = charts.framed(_two_bars(title="T", legend=dict(orientation="h", y=-0.2)))
    title_room = charts.TOP_PAD_PX + int(charts.NORMAL_TYPE["title"] * 1.45)
    assert fig.layout.legend.yref == "container" and fig.layout.legend.yanchor == "top"
    assert fig.layout.legend.y == 1 - title_room / 300
    assert fig.layout.margin.t > title_room + charts.NORMAL_TYPE["legend"]  # the plot starts under the legend
    assert fig.layout.title.yref == "container" and fig.layout.title.yanchor == "top"


def test_without_a_legend_or_title_the_top_margin_stays_small():
    fig = go.Figure([go.Bar(x=[1], y=[1], name="only")], layout=dict(height=300))
    assert charts.framed(fig)[0].layout.margin.t == 20
    titled = charts.framed(go.Figure([go.Bar(x=[1], y=[1])], layout=dict(title="T", height=300)))[0]
    assert titled.layout.margin.t == charts.TOP_PAD_PX + int(charts.NORMAL_TYPE["title"] * 1.45)


def test_a_legend_at_the_foot_in_container_coordinates_stays_there():
    foot = dict(orientation="h", yref="container", y=0.0, yanchor="bottom")
    fig, _ = charts.framed(_two_bars(title="T", legend=foot))
    assert (fig.layout.legend.y, fig.layout.legend.yanchor) == (0.0, "bottom")


def test_legend_rows_wrap_whole_entries_at_the_width():
    one = len("abcd") * charts.CHAR_WIDTH * 10 + charts.LEGEND_SWATCH_PX
    assert charts.legend_rows([], 10, 500) == 0
    assert charts.legend_rows(["abcd", "abcd"], 10, int(2 * one) + 1) == 1
    assert charts.legend_rows(["abcd", "abcd"], 10, int(2 * one) - 1) == 2


def test_turned_tick_labels_become_plotlys_choice_and_axes_grow_the_margins():
    fig, _ = charts.framed(_two_bars(xaxis=dict(tickangle=-45)))
    assert fig.layout.xaxis.tickangle is None and fig.layout.xaxis.automargin is True
    assert fig.layout.yaxis.automargin is True
    upright = charts.framed(_two_bars(xaxis=dict(tickangle=90)))[0]
    assert upright.layout.xaxis.tickangle == 90


def test_an_axis_on_top_gets_room_under_the_title():
    plain = charts.framed(_two_bars(title="T"))[0].layout.margin.t
    on_top = charts.framed(_two_bars(title="T", xaxis=dict(side="top", tickangle=-60, title="key",
                                                          tickvals=[0, 1], ticktext=["a long label", "b"])))[0]
    assert on_top.layout.margin.t > plain + 12 * 1.5 + 14
    assert on_top.layout.xaxis.tickangle == -60  # its room was counted at this angle


def _legend_of(entries: int, **layout) -> go.Figure:
    return go.Figure([go.Scatter(x=[1, 2], y=[1, 2], name=f"a fairly long series name {i}") for i in range(entries)],
                     layout=dict(height=300, title="T", **layout))


def test_a_legend_of_many_rows_makes_the_chart_taller_not_its_plot_smaller():
    few = charts.framed(_legend_of(2))[0]
    assert few.layout.height == 300  # one legend row: the height asked for
    many = charts.framed(_legend_of(12))[0]
    rows = charts.legend_rows([f"a fairly long series name {i}" for i in range(12)], charts.NORMAL_TYPE["legend"],
                              charts.LEGEND_WIDTH_PX["normal"])
    assert rows > 3
    assert many.layout.height > 300
    assert many.layout.height - many.layout.margin.t >= 300 * charts.MIN_PLOT_SHARE  # the plot kept its share
    title_room = charts.TOP_PAD_PX + int(charts.NORMAL_TYPE["title"] * 1.45)
    assert many.layout.legend.y == 1 - title_room / many.layout.height  # still right under the title


def test_on_a_projector_a_legend_of_many_rows_leaves_the_height_asked_for():
    """The first screen is the projector's limit: only a y title that would be cut grows a presenter chart."""
    many = charts.framed(_legend_of(12), large=True)[0]
    assert many.layout.height == 300
    assert charts.framed(_legend_of(12))[0].layout.height > 300  # the same figure grows off the projector


def test_presenter_type_grows_a_chart_whose_y_title_would_be_cut():
    long_title = "speed-up over plain decoding, measured (×)"
    short = charts.framed(_legend_of(2, yaxis=dict(title="ms")), large=True)[0]
    assert short.layout.height == 300
    tall = charts.framed(_legend_of(2, yaxis=dict(title=long_title)), large=True)[0]
    title_px = len(long_title) * charts.CHAR_WIDTH * charts.LARGE["axis_title"]
    assert tall.layout.height > 300 and tall.layout.height >= title_px


def _every_kind() -> list[go.Figure]:
    """Figures with each part the rule and the styling touch: a title and legend, subplot axes, annotations on top,
    text on bars, a heatmap's colorbar, a background of its own."""
    from plotly.subplots import make_subplots

    grid = make_subplots(rows=1, cols=2, subplot_titles=("left", "right"))
    grid.add_trace(go.Bar(x=["a", "b"], y=[1, 2], name="one", text=["1", "2"]), row=1, col=1)
    grid.add_trace(go.Scatter(x=[1, 2], y=[2, 1], name="two"), row=1, col=2)
    grid.update_layout(height=320, title="Two<br>(with details)", xaxis2=dict(tickangle=-30, title="x two"))
    heat = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]], colorbar=dict(title="v")),
                     layout=dict(title="H", height=300, plot_bgcolor="white", paper_bgcolor="white"))
    return [_two_bars(title="T<br>rest", xaxis=dict(tickangle=-45, title="token"), yaxis=dict(title="p")),
            grid, heat, _legend_of(9, yaxis=dict(title="a long y title that needs room"))]


def test_the_rule_and_the_styling_write_only_what_plotly_accepts_and_leave_the_original_alone():
    """framed and style write the layout as plain dicts, without plotly's checks: plotly, checking the result
    again, must find nothing to change or refuse; style must not touch the figure it was given."""
    for fig in _every_kind():
        for large in (False, True):
            for dark in (False, True):
                original = go.Figure(fig).to_dict()
                shown, _ = charts.framed(charts.style(go.Figure(fig), large=large, dark=dark), large=large)
                sent = shown.to_dict()
                assert go.Figure(sent).to_dict() == sent
                assert go.Figure(fig).to_dict() == original
    bad = _two_bars()
    charts._write_layout(bad, {"legend": {"orientation": "sideways"}})  # the check above can fail
    with pytest.raises(ValueError):
        go.Figure(bad.to_dict())


def test_presenter_styling_sets_every_size_it_promises():
    fig = _every_kind()[1]
    big = charts.style(fig, large=True, dark=True).layout
    assert (big.font.size, big.title.font.size, big.legend.font.size) == (
        charts.LARGE["font"], charts.LARGE["title"], charts.LARGE["legend"])
    for axis in (big.xaxis, big.xaxis2, big.yaxis, big.yaxis2):
        assert (axis.tickfont.size, axis.title.font.size) == (charts.LARGE["ticks"], charts.LARGE["axis_title"])
    assert [a.font.size for a in big.annotations] == [charts.LARGE["annotations"]] * 2
    assert big.height == int(320 * charts.HEIGHT_GROWTH) and big.paper_bgcolor is None  # no background of its own
    assert fig.layout.font.size is None and fig.layout.height == 320  # the original as it was
    heat = _every_kind()[2]
    dark = charts.style(heat, large=False, dark=True).layout
    assert (dark.paper_bgcolor, dark.plot_bgcolor, dark.font.size) == (charts.TRANSPARENT, charts.TRANSPARENT, None)
    assert heat.layout.paper_bgcolor == "white" and charts.style(heat, large=False, dark=False) is heat
