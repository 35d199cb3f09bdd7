"""The serving charts' legends sit under the plot, at the foot of the figure, clear of the subplot titles."""
from __future__ import annotations

from autoreg_core.engine.model_spec import ModelSpec
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments.precision import Quality
from autoreg_ui.lessons.serving import figures as figs

SPEC = ModelSpec("m", 30, 9, 3, 64, 576, 49152, 134_515_008, 106_000_000, 8192)


def _figures():
    sweep = batching.BatchSweep("m", 64, [1, 2, 4], [batching.BatchPoint(b, 64, 20.0 + b, 3) for b in (1, 2, 4)])
    curves = {"blocks": [(8, Quality(0.0, 1.0, 5.0, 10)), (2, Quality(3.0, 0.2, 90.0, 10))]}
    return [figs.batching_figure(sweep, SPEC, 20e9, 50e9), figs.dial_figure(curves), figs.pass_rows_figure({1: 2})]


def test_legends_sit_at_the_foot_of_the_figure_below_the_subplot_titles():
    for fig in _figures():
        legend = fig.layout.legend
        assert (legend.orientation, legend.yref, legend.y, legend.yanchor) == ("h", "container", 0.0, "bottom")
        titles = [a for a in fig.layout.annotations if a.yref == "paper"]
        assert all(a.y >= 1.0 and a.yanchor == "bottom" for a in titles)  # above the plot; the legend is under it


def test_the_figure_grows_by_the_legend_room_and_keeps_its_plot():
    batching_fig, dial, _ = _figures()
    for fig in (batching_fig, dial):
        assert fig.layout.height == 360 + figs.LEGEND_ROOM
        assert fig.layout.margin.b == 50 + figs.LEGEND_ROOM
        assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b == 360 - 70 - 50
