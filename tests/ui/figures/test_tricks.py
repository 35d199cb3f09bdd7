"""The tricks page's speed-up figure: one legend entry per curve (its star grouped with it and kept out of the
legend, the title saying what a star marks), colours by place, each curve's best k starred."""
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_ui import charts
from autoreg_ui.lessons.tricks import figures as figs
from autoreg_ui.lessons.tricks import text


def test_each_curve_is_one_legend_entry_with_its_star_grouped_and_unlisted():
    whatif, copied = spec_math.best_k(0.7, 0.1), spec_math.best_k(0.95, 0.02)
    fig = figs.speedup_figure([(text.WHATIF_CURVE_BESIDE, whatif), ("copying · lookup", copied)],
                              text.SPEC_CURVES_TITLE)
    assert [t.name for t in fig.data] == [text.WHATIF_CURVE_BESIDE, f"best k for {text.WHATIF_CURVE_BESIDE}",
                                          "copying · lookup", "best k for copying · lookup"]
    assert [t.legendgroup for t in fig.data] == [text.WHATIF_CURVE_BESIDE] * 2 + ["copying · lookup"] * 2
    assert [t.showlegend for t in fig.data] == [None, False, None, False]  # the curves listed, the stars not
    assert [list(t.x) for t in fig.data[1::2]] == [[whatif.k], [copied.k]]
    assert [list(t.y) for t in fig.data[0::2]] == [list(whatif.curve), list(copied.curve)]
    assert [t.line.color for t in fig.data[0::2]] == list(figs.COLOURS[:2])  # the what-if curve's colour first
    assert charts.split_title(fig.layout.title.text) == (
        "Where each measured draft stops paying",
        "Each draft's curve is the formula E / (k·c + 1) with that draft's measured α and c, not a run at every k; a "
        "star marks each curve's best k.")


def test_the_what_if_chart_says_what_its_star_marks():
    fig = figs.speedup_figure([(text.WHATIF_CURVE, spec_math.best_k(0.7, 0.1))], text.WHATIF_TITLE)
    assert charts.split_title(fig.layout.title.text) == ("Where a longer draft stops paying",
                                                         "the star marks the best k")
    assert [t.name for t in fig.data if t.showlegend is not False] == [text.WHATIF_CURVE]
