"""The scripts chart: one bar per script, its height the tokens for the same sentence against English's."""
from autoreg_core.engine.tokens import ScriptCount
from autoreg_ui.lessons.tokens.figures import scripts_figure


def test_one_bar_per_script_with_its_ratio_and_count():
    rows = [ScriptCount("Tamil", "y" * 5, 5, 15, 9, 3), ScriptCount("English", "x" * 8, 8, 8, 2, 0)]
    fig = scripts_figure(rows)
    bar = fig.data[0]
    assert list(bar.x) == ["English", "Tamil"]  # cheapest first
    assert list(bar.y) == [1.0, 4.5]  # tokens ÷ English's tokens, not per character
    assert list(bar.customdata) == [0.25, 1.8]  # tokens per character, in the hover only
    assert list(bar.text) == ["2 tokens", "9 tokens"]
    assert fig.layout.yaxis.title.text == "tokens for the same sentence, × English"
