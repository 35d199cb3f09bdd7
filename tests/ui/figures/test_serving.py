"""The serving page's figures carry the bytes model and the measured qualities they are given."""
from autoreg_core.experiments.precision import Quality
from autoreg_ui.lessons.serving import figures as figs


def test_bytes_figure_reads_the_weights_once_and_every_rows_cache(tiny):
    spec = tiny.spec
    weights, cache = figs.bytes_figure(spec, [1, 4], 32).data
    mib = 1024 ** 2
    assert list(weights.y) == [spec.weight_bytes_per_step / mib] * 2
    assert list(cache.y) == [spec.cache_bytes(32, 1) / mib, spec.cache_bytes(32, 4) / mib]


def test_dial_figure_plots_kl_and_top1_per_grouping():
    curves = {"blocks": [(8, Quality(0.0, 1.0, 5.0, 10)), (2, Quality(3.0, 0.2, 90.0, 10))],
              "rows": [(8, Quality(0.01, 0.9, 5.1, 10)), (2, Quality(4.0, 0.1, 99.0, 10))]}
    kl_blocks, top1_blocks, kl_rows, top1_rows = figs.dial_figure(curves).data
    assert list(kl_blocks.y) == [1e-9, 3.0]  # a zero KL is drawn at the log axis' floor
    assert list(top1_rows.y) == [0.9, 0.1] and list(top1_blocks.x) == [8, 2]
