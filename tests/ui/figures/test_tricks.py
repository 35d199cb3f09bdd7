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
        f"Predicted speed-up of each measured draft, k = 1 to {spec_math.MAX_K}",
        "Each prompt and draft's curve is the formula E / (k·c + 1) with the α and c measured at the k you ran, not a "
        f"run at every k. A star marks each curve's highest point in k = 1–{spec_math.MAX_K}: a star below the dotted "
        f"1× line means no draft length pays, and a star at k = {spec_math.MAX_K} may not be the top.")


def test_the_caption_s_two_warnings_each_happen_and_each_has_its_other_side():
    """A cheap draft kept often still rises at the chart's edge (its star is not the top); a costly draft kept
    rarely never pays (its star sits under 1×); a middle case has its top inside the range and above 1×."""
    rising, never, middle = spec_math.best_k(0.95, 0.02), spec_math.best_k(0.3, 0.5), spec_math.best_k(0.7, 0.1)
    fig = figs.speedup_figure([("rising", rising), ("never", never), ("middle", middle)], text.SPEC_CURVES_TITLE)
    stars = fig.data[1::2]
    assert [s.x[0] for s in stars] == [spec_math.MAX_K, 1, middle.k] and 1 < middle.k < spec_math.MAX_K
    assert spec_math.speedup(0.95, spec_math.MAX_K + 4, 0.02) > rising.speedup  # past the edge it still rises
    assert never.speedup < 1 < middle.speedup and stars[1].y[0] < 1 < stars[2].y[0]
    assert stars[0].hovertemplate.startswith(f"highest for k ≤ {spec_math.MAX_K}: k = ")


def test_the_what_if_chart_says_what_its_star_marks():
    fig = figs.speedup_figure([(text.WHATIF_CURVE, spec_math.best_k(0.7, 0.1))], text.WHATIF_TITLE)
    assert charts.split_title(fig.layout.title.text) == (
        "Speed-up by draft length k", f"the star marks the best k from 1 to {spec_math.MAX_K}")
    assert [t.name for t in fig.data if t.showlegend is not False] == [text.WHATIF_CURVE]
