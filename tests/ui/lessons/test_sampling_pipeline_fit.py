"""The sampling pipeline view on one screen: one fixed probability axis (a higher temperature looks flatter),
axis names that stay in their own column, titles short enough for three panels a row, and a presenter height."""
from __future__ import annotations

import pytest
import torch

from autoreg_core import SamplingConfig
from autoreg_core.engine import decode
from autoreg_core.experiments import sampling_lab as lab
from autoreg_ui.lessons.sampling import text
from autoreg_ui.lessons.sampling.figures import pipeline as figures

VOCAB = 49_152  # the embedded model's: the longest counts a title can hold ("49,152 left")


def _figure(temperature: float, **settings):
    logits = torch.randn(VOCAB, generator=torch.Generator().manual_seed(5)) * 3.0
    pipe = decode.process(logits, None, SamplingConfig(temperature=temperature, **settings))
    ids = lab.top_token_ids(logits, 15)
    return pipe, figures.pipeline_figure(pipe, ids, [str(i) for i in ids])


def _y_axes(fig) -> list:
    n = len([t for t in fig.data if t.type == "bar"])
    return [fig.layout["yaxis" + ("" if k == 0 else str(k + 1))] for k in range(n)]


def test_two_temperatures_share_one_probability_axis():
    (cold_pipe, cold), (hot_pipe, hot) = _figure(0.3, top_p=0.9), _figure(1.5, top_p=0.9)
    ranges = {}
    for name, pipe, fig in (("cold", cold_pipe, cold), ("hot", hot_pipe, hot)):
        axes = _y_axes(fig)
        assert len(axes) == len(pipe.stages) + 1
        raw = fig.data[0]  # the raw logits: their own scale, zoomed around them, bars rising from the axis's bottom
        shown = [raw.base + v for v in raw.y if v is not None]
        assert raw.base == axes[0].range[0]
        assert axes[0].autorange is False and axes[0].range[0] < min(shown) < max(shown) < axes[0].range[1]
        ranges[name] = [tuple(a.range) for a in axes[1:]]
        assert ranges[name] == [figures.PROB_RANGE] * (len(axes) - 1)
        assert all(a.autorange is False for a in axes[1:])
    assert ranges["cold"] == ranges["hot"]
    # the same axis, so the flatter distribution is lower: its top bar in the last panel is shorter
    top = [max([t for t in fig.data if t.type == "bar"][-1].y) for fig in (cold, hot)]
    assert top[1] < top[0] <= figures.PROB_RANGE[1]


def test_axis_names_only_in_the_first_column():
    _, fig = _figure(0.8, top_k=50, top_p=0.95, min_p=0.05)
    titles = [a.title.text or "" for a in _y_axes(fig)]
    assert titles == ["logit", "", "", "probability", "", ""]


@pytest.mark.parametrize("settings", [dict(temperature=0.8, top_k=50, top_p=0.95, min_p=0.05),
                                      dict(temperature=1.5), dict(temperature=0.0),
                                      dict(temperature=0.7, top_k=5, repetition_penalty=1.3)])
def test_panel_titles_are_one_short_line(settings):
    logits = torch.randn(VOCAB, generator=torch.Generator().manual_seed(6)) * 3.0
    pipe = decode.process(logits, torch.tensor([1, 2, 3]), SamplingConfig(**settings))
    ids = lab.top_token_ids(logits, 15)
    fig = figures.pipeline_figure(pipe, ids, [str(i) for i in ids])
    titles = [a.text for a in fig.layout.annotations if a.xref == "paper"]
    assert len(titles) == len(pipe.stages) + 1
    assert all("<br>" not in t and len(t) <= 25 for t in titles), titles


def test_presenter_height_is_the_figure_height():
    logits = torch.randn(500, generator=torch.Generator().manual_seed(7))
    pipe = decode.process(logits, None, SamplingConfig())
    ids = lab.top_token_ids(logits, 10)
    assert figures.pipeline_figure(pipe, ids, [str(i) for i in ids]).layout.height == figures.HEIGHT
    small = figures.pipeline_figure(pipe, ids, [str(i) for i in ids], height=figures.PRESENTER_HEIGHT)
    assert small.layout.height == figures.PRESENTER_HEIGHT < figures.HEIGHT


def test_the_two_temperatures_are_wired_as_the_lab_caption_says():
    """text.LAB_SLIDERS: the lab's sliders start at the sidebar's, then are the lab's own; Copy makes them equal;
    the repetition penalty is the sidebar's."""
    from autoreg_ui import keys
    from autoreg_ui.lessons.sampling import controller
    from autoreg_ui.lessons.sampling import keys as sampling_keys

    sidebar = SamplingConfig(temperature=0.4, top_k=7, top_p=0.8, min_p=0.01, repetition_penalty=1.2, seed=3)
    state = {keys.CONFIG: sidebar, **controller.defaults(sidebar, "x", False)}
    assert controller.lab_config(state) == sidebar  # started at the sidebar's
    state[sampling_keys.LAB_TEMPERATURE] = 1.5  # the lab's slider moves; the sidebar's does not
    assert controller.lab_config(state).temperature == 1.5 and controller.sidebar_config(state).temperature == 0.4
    assert controller.lab_config(state).repetition_penalty == 1.2
    controller.copy_sidebar(state)
    assert controller.lab_config(state) == sidebar
    assert "sidebar's settings" in text.LAB_SLIDERS and "Copy the sidebar's settings" in text.LAB_SLIDERS
    assert text.LAB_TEMPERATURE.startswith("Lab temperature")


def test_the_raw_logit_axis_is_zoomed_around_the_shown_logits_and_says_so():
    from autoreg_ui.lessons.sampling.figures import pipeline as drawn

    assert drawn.zoomed_range([34.2, 31.8, float("-inf")]) == dict(
        range=[31.8 - 2.4 * drawn.ZOOM_PAD, 34.2 + 2.4 * drawn.ZOOM_PAD], autorange=False)
    low, high = drawn.zoomed_range([5.0, 5.0])["range"]  # one value: a spread of 1 around it, not a zero-height axis
    assert (low, high) == (5.0 - drawn.ZOOM_PAD, 5.0 + drawn.ZOOM_PAD)
    assert drawn.zoomed_range([float("-inf")]) == {}
    pipe, fig = _figure(1.0)
    assert any(a.text == text.RAW_PANEL_TITLE for a in fig.layout.annotations)
    assert "zoomed" in text.RAW_PANEL_TITLE and "zoomed" in text.shown_caption(pipe, [0, 1], VOCAB)


def test_negative_logits_still_draw_the_best_token_tallest():
    """GPT-2's logits are negative: on a zoomed axis, bars drawn from 0 would hang from the top, the best shortest."""
    from autoreg_ui.lessons.sampling.figures import pipeline as drawn

    logits = torch.tensor([-30.0, -32.5, -40.0, -35.0])
    pipe = decode.process(logits, None, SamplingConfig(temperature=1.0))
    fig = drawn.pipeline_figure(pipe, [0, 1, 3, 2], ["a", "b", "d", "c"])
    raw = fig.data[0]
    assert list(raw.y) == sorted(raw.y, reverse=True) and min(raw.y) > 0  # highest logit, tallest bar
    assert [raw.base + h for h in raw.y] == pytest.approx([-30.0, -32.5, -35.0, -40.0])
    assert [c[3] for c in raw.customdata] == pytest.approx([-30.0, -32.5, -35.0, -40.0])  # hover shows the logit


def test_the_u_label_sits_where_no_interval_is_drawn():
    from autoreg_ui.lessons.sampling.figures import pipeline as drawn

    assert [drawn.u_label_corner(u) for u in (0.061, 0.4999, 0.5, 0.97)] == [
        "bottom right", "bottom right", "top left", "top left"]
