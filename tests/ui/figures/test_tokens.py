"""The scripts chart: one bar per script, its height the tokens for the same sentence against English's."""
import re

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


def test_the_typed_text_as_chips_escaped_one_per_token_in_turning_shades(tiny):
    from autoreg_core.engine.tokens import token_views
    from autoreg_ui.step_figures import CHUNK_SHADES, chunks_html

    ids = tiny.tokenizer("<b>cat</b> sat on the mat", add_special_tokens=False)["input_ids"]
    views = token_views(tiny.tokenizer, ids)
    page = chunks_html(views)
    assert "<b>" not in page.split("</style>", 1)[1]  # the typed text is never HTML
    assert page.count('role="listitem"') == len(views) > len(CHUNK_SHADES)
    shades = [int(n) for n in re.findall(r'class="tok p(\d+)"', page)]
    assert shades == [CHUNK_SHADES[i % len(CHUNK_SHADES)] for i in range(len(views))]
    assert all(a != b for a, b in zip(shades, shades[1:]))  # neighbours always differ
