"""The attention page's figures: the token strip (escaped, shaded), the bars, heads, triangle and GQA, and the KV
cache's figures."""
import re

import numpy as np
import pytest

from autoreg_core import Session
from autoreg_core.engine import kv_cache as kvc
from autoreg_core.engine.attention import query_to_kv_head
from autoreg_core.engine.model_spec import PRESETS
from autoreg_core.experiments import attention_rows as av
from autoreg_ui import palette
from autoreg_ui.lessons.attention import figures as fig_att


def test_strip_html_escapes_and_shades():
    html = fig_att.attention_strip_html(["<script>alert(1)</script>", "ok", "&"], [0.2, 0.8, np.nan], 1, 1)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&amp;" in html
    chips = html.split('<span role="listitem" class="')[1:]
    assert len(chips) == 3
    # the shade is the weight's share of the row's largest: 0.2 / 0.8 -> shade 5 of 20, the largest -> 20
    assert chips[0].startswith("atok w5 prompt\"") and chips[1].startswith("atok w20 query\"")
    assert chips[2].startswith("atok unseen\"") and "not visible" in chips[2]
    assert "the query" in chips[1] and "prompt" not in chips[1]
    assert "style=" not in "".join(chips)  # every look is a class of the strip's own style sheet


def test_strip_says_each_weight_in_words_and_marks_it_with_a_bar_not_only_a_colour():
    html = fig_att.attention_strip_html(["The", " cat", " <sat>"], [0.1, 0.25, 0.65], 2, 2)
    spoken = re.findall(r'<span class="sr">([^<]*)</span>', html)
    assert spoken == [", attention weight 10.0%, prompt", ", attention weight 25.0%, prompt",
                      ", attention weight 65.0%, the query, the new token"]
    assert '<div class="attstrip" role="list" aria-label="' in html and html.count('role="listitem"') == 3
    assert "&lt;sat&gt;" in html and "<sat>" not in html
    css = fig_att.ATTENTION_STRIP_CSS
    bars = [int(b) for b in re.findall(r"box-shadow:inset 0 -(\d+)px 0", css)]
    assert bars == sorted(bars) and bars[0] == 0 and bars[-1] == fig_att.STRIP_BAR_PX  # taller with the weight
    assert len(bars) == palette.PROB_STEPS + 1
    for i in range(palette.PROB_STEPS + 1):  # dark text stays readable on every shade (WCAG AA)
        assert palette.contrast(palette.TEXT, palette.prob_color(i / palette.PROB_STEPS)) >= 4.5
    assert f"color:{palette.TEXT}" in css and "div.attstrip span.atok" in css


def test_figures_carry_the_data():
    labels = ["a", "<b>", "c"]
    w = np.array([0.5, 0.25, 0.25])
    bar = fig_att.attention_bar_figure(labels, w, 2, "t")
    np.testing.assert_allclose(bar.data[0].y, w)
    assert list(bar.layout.xaxis.ticktext) == ["a", "&lt;b&gt;", "c"]
    assert list(bar.data[0].marker.color) == [fig_att.PROMPT_COLOR, fig_att.PROMPT_COLOR, fig_att.QUERY_COLOR]
    grid = fig_att.heads_grid_figure(labels, np.tile(w, (9, 1)), query_to_kv_head(9, 3), "g")
    assert len(grid.data) == 9
    assert [t.marker.color for t in grid.data[:4]] == [fig_att.KV_COLORS[0]] * 3 + [fig_att.KV_COLORS[1]]
    z = np.array([[1, np.nan, np.nan], [0.4, 0.6, np.nan], [np.nan] * 3])
    tri = fig_att.triangle_figure(z, labels, [av.PREFILL, av.DECODE, av.MISSING], 1, "tri")
    assert tri.data[1].z.shape == (3, 3)
    assert [row[0] for row in tri.data[0].z] == [0, 1, 2]  # prefill / decode / missing strip
    assert [sh.type for sh in tri.layout.shapes] == ["rect", "line"]  # the missing row; the boundary
    assert tri.layout.yaxis.title.text == "query (new token)"
    assert tri.layout.xaxis2.title.text == "key (cached token)"


def test_triangle_window_uses_absolute_positions():
    n, first = 4, 10
    z = np.tril(np.full((n, n), 0.25))
    z[np.triu_indices(n, 1)] = np.nan
    fig = fig_att.triangle_figure(z, list("abcd"), [av.DECODE, av.MISSING, av.DECODE, av.DECODE], 12, "w",
                                  first=first)
    heat = fig.data[1]
    assert list(heat.x) == list(heat.y) == [10, 11, 12, 13]
    assert [row[0] for row in fig.data[0].z] == [0, 2, 1, 1]  # position 10, 11 are prompt; 11 missing
    line = next(sh for sh in fig.layout.shapes if sh.type == "line")
    assert line.y0 == 11.5 and line.x0 == 9.5
    rect = next(sh for sh in fig.layout.shapes if sh.type == "rect")
    assert (rect.y0, rect.y1, rect.x1) == (10.5, 11.5, 11.5)
    assert fig.layout.yaxis.ticktext[0].startswith("10: ")


def test_shapes_table_and_formula_text(tiny):
    s = Session(tiny, "The cat")
    s.prefill()
    rows = fig_att.shapes_table(kvc.layer_shapes(s.cache))
    P = s.prompt_len
    assert rows == [{"layer": i, "K shape": f"[1, 2, {P}, 16]", "V shape": f"[1, 2, {P}, 16]", "dtype": "float32",
                     "bytes (K+V)": 256 * P} for i in range(2)]
    seventy = PRESETS["70B model with GQA, 4K tokens"]
    assert fig_att.formula_latex(seventy, 4096, 8) == (
        r"2 \times 80 \times 8 \times 8 \times 128 \times 4{,}096 \times 2 = 10{,}737{,}418{,}240\ \text{bytes}")


def test_memory_and_phase_figures():
    spec = PRESETS["70B model with GQA, 4K tokens"]
    fig = fig_att.memory_figure(spec)
    cache_line, weights_line, marker = fig.data
    assert list(marker.x) == [4096] and marker.y[0] == pytest.approx(1.25)  # GiB
    assert weights_line.y[0] == pytest.approx(68_976_648_192 * 2 / 1024 ** 3)
    assert cache_line.y[0] == 0 and max(cache_line.x) == 8192
    assert cache_line.y[-1] == pytest.approx(2.5)  # a straight line: twice the tokens, twice the bytes
    quantised = fig_att.memory_figure(spec.with_precision(weight_bytes=0.5))
    assert quantised.data[1].y[0] == pytest.approx(weights_line.y[0] / 4)  # 4-bit weights...
    assert list(quantised.data[0].y) == list(cache_line.y)  # ...leave the cache as it was
    bars = fig_att.phase_times_figure(2.0, 30.0, 12)
    assert list(bars.data[0].y) == [2.0, 30.0]
    assert fig_att.cache_growth_figure([], 1.0).data == ()


def test_the_memory_chart_title_and_formula_hold_for_sliding_window_models():
    """A sliding layer keeps at most window − 1 positions: the title must not say "linearly" for it, and the
    formula's factors must multiply to the bytes it prints."""
    from dataclasses import replace

    from autoreg_ui.charts import split_title
    from autoreg_ui.lessons.attention import text

    full = replace(PRESETS["70B model with GQA, 4K tokens"], n_layers=2, layer_windows=(None, None))
    mixed, every = replace(full, layer_windows=(64, None)), replace(full, layer_windows=(64, 64))
    assert text.memory_title(full) == "The cache grows linearly with tokens"
    assert "more slowly once the 64-token window fills" in text.memory_title(mixed)
    assert "then stays flat" in text.memory_title(every) and "linearly" not in text.memory_title(every)
    line = fig_att.memory_figure(every).data[0]
    assert line.y[-1] == line.y[-2]  # flat once the window is full, as the title says
    title, caption = split_title(fig_att.memory_figure(every).layout.title.text)
    assert title == text.memory_title(every) and caption.startswith("Computed, not measured") and "&" not in caption
    for spec in (mixed, every):
        shown = fig_att.formula_latex(spec, 1000).replace("{,}", "")
        left = re.sub(r"\\underbrace\{(.*?)\}_\{.*?\}\}(?= \\times)", r"\1", shown.split("=")[0])  # its words
        product = eval(left.replace(r"\times", "*"), {})  # noqa: S307 - digits, +, * and brackets written above
        assert product == spec.cache_bytes(1000, 1) == int(shown.split("=")[1].split("\\")[0])
