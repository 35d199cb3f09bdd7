"""The tokens-per-character chart: one bar per script, its height the measured ratio."""
from autoreg_core.tokens import ScriptCount
from autoreg_ui.lessons.tokens.figures import scripts_figure


def test_one_bar_per_script_with_its_ratio_and_count():
    rows = [ScriptCount("English", "x" * 8, 8, 8, 2, 0), ScriptCount("Tamil", "y" * 5, 5, 15, 9, 3)]
    fig = scripts_figure(rows)
    bar = fig.data[0]
    assert list(bar.x) == ["English", "Tamil"]
    assert list(bar.y) == [0.25, 1.8]
    assert list(bar.text) == ["2 tokens", "9 tokens"]
