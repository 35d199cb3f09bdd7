"""The causal triangle on a projector: a fixed height (the chart fits under the step buttons at 720 px), a top
margin for large type above the key labels, and the phase strip reserving no margin of its own."""
from __future__ import annotations

import numpy as np

from autoreg_core.experiments import attention_rows as av
from autoreg_ui.charts import HEIGHT_GROWTH
from autoreg_ui.lessons.attention import figures as fig_att


def _triangle(n: int, **kwargs):
    z = np.tril(np.full((n, n), 1.0 / n))
    z[np.triu_indices(n, 1)] = np.nan
    return fig_att.triangle_figure(z, [f"t{i}" for i in range(n)], [av.PREFILL] * 5 + [av.DECODE] * (n - 5), 5,
                                   "Layer 15, head 0", **kwargs)


def test_the_presenter_height_is_fixed_and_leaves_room_for_the_rows():
    for n in (9, 10, 30):
        fig = _triangle(n, height=fig_att.PRESENTER_TRIANGLE_HEIGHT)
        assert fig.layout.height == fig_att.PRESENTER_TRIANGLE_HEIGHT
        assert fig.layout.margin.t == fig_att.PRESENTER_TOP_MARGIN
    # grown on a projector, the plot keeps about one type height (19 px) per row of the stop's 9 to 10 rows
    plot = fig_att.PRESENTER_TRIANGLE_HEIGHT * HEIGHT_GROWTH - fig_att.PRESENTER_TOP_MARGIN - 12
    assert plot / 10 >= 17


def test_without_a_height_the_figure_grows_with_the_rows_as_before():
    small, large = _triangle(9), _triangle(40)
    assert small.layout.height == 360 + 50 and large.layout.height == 16 * 40 + 160 + 50
    assert small.layout.margin.t == fig_att.TOP_MARGIN
    assert small.layout.xaxis2.title.text == "key (cached token)"


def test_the_phase_strip_reserves_no_margin():
    strip = _triangle(9).layout.xaxis
    assert strip.showticklabels is False and strip.automargin is False and strip.ticks == ""
