"""The inside page's figures carry exactly the numbers they are given."""
from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments import logit_lens as lens
from autoreg_core.experiments.prefill_decode import PrefillPoint
from autoreg_ui.lessons.inside import figures as figs


def test_teacher_figure_bars_and_marks():
    fig = figs.teacher_figure([1, 2, 3], [-0.5, -2.0, -0.1], [-0.5, -2.0, -0.1], [False, True, False])
    bars, marks = fig.data
    assert list(bars.x) == [1, 2, 3] and list(bars.y) == [-0.5, -2.0, -0.1]
    assert list(marks.y) == [-0.5, -2.0, -0.1] and bars.marker.color[1] != bars.marker.color[0]


def test_sweep_figure_plots_per_token_costs():
    points = [PrefillPoint(8, 40.0, 20.0), PrefillPoint(64, 80.0, 22.0)]
    decode_line, prefill_line = figs.sweep_figure(points).data
    assert list(decode_line.x) == [8, 64] and list(decode_line.y) == [20.0, 22.0]
    assert list(prefill_line.y) == [5.0, 1.25]  # pass time ÷ L
    assert list(decode_line.customdata) == [4.0, 17.6]


def test_window_figure_in_mib():
    full, windowed = figs.window_bytes_figure([1024 ** 2, 2 * 1024 ** 2], [1024 ** 2, 1024 ** 2], 4).data
    assert list(full.y) == [1.0, 2.0] and list(windowed.y) == [1.0, 1.0] and windowed.name == "sliding window, W = 4"


def test_lens_figures_from_a_real_reading(tiny):
    s = Session(tiny, "The cat sat")
    s.generate(2, SamplingConfig(temperature=0))
    reading = lens.logit_lens(tiny, s.ids[:-1], s.ids[-1])
    grid = figs.lens_figure(tiny.tokenizer, reading)
    assert len(grid.data) == 1 and len(grid.data[0].z) == reading.depth
    assert grid.data[0].textfont.size == figs.LENS_CELL_FONT_PX >= 11  # plotly would shrink it to fit the cell
    target = figs.lens_target_figure(tiny.tokenizer, reading)
    assert len(target.data[0].x) == reading.depth
