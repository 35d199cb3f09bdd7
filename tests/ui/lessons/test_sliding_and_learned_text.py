"""The attention page on a sliding-window model and the positions tab on a learned-position model: each sentence on
both sides of its boundary (full vs sliding layer, before and after the window fills; rotary vs learned positions)."""
import numpy as np

from autoreg_core.engine.kv_cache import CachePoint, worked_example
from autoreg_ui.lessons.attention import figures as fig_att
from autoreg_ui.lessons.attention import sliding_text as st_
from autoreg_ui.lessons.attention import text
from autoreg_ui.lessons.hood import controller as hood
from autoreg_ui.lessons.hood import positions_text as pt
from autoreg_ui.lessons.hood import text as hood_text
from tests import zoo

W = zoo.WINDOW


def _specs():
    return zoo.bundle("llama").spec, zoo.bundle("mistral").spec, zoo.bundle("gemma2").spec


def test_the_window_of_each_layer_comes_from_the_spec():
    llama, mistral, gemma = _specs()
    assert [st_.window_of(llama, i) for i in range(2)] == [None, None]
    assert [st_.window_of(mistral, i) for i in range(2)] == [W, W]
    assert [st_.window_of(gemma, i) for i in range(2)] == [W, None]


def test_the_decode_step_and_its_weights_on_a_full_and_a_sliding_layer():
    assert st_.decode_step_intro(None) == text.DECODE_STEP_INTRO  # a full layer: the stored sentence
    assert "sliding layer" in st_.decode_step_intro(W) and "all $t + 1$" not in st_.decode_step_intro(W)
    full = text.weights_text(16, 50)
    assert "exactly **50** weights" in full
    before = st_.sliding_weights_text(16, W - 1, W)  # the window not yet full: every position kept
    assert f"**{W - 1}** weights" in before and "shorter than this layer's window" in before
    at = st_.sliding_weights_text(16, W, W)  # the first query whose window is full: nothing masked yet
    assert f"**{W}** weights" in at and "outside the window" not in at and f"keeps the last {W - 1}" in at
    after = st_.sliding_weights_text(16, 50, W)
    assert f"**{W}** weights" in after and f"The {50 - W} earlier positions (0 to {50 - W - 1})" in after
    assert "50 weights" not in after


def test_the_bar_caption_names_the_window_once_keys_fall_outside_it():
    assert "positions 0 to 49" in text.bar_title("L", 49)
    inside = st_.sliding_bar_title("L", W - 1, W)
    assert f"positions 0 to {W - 1}" in inside and "all inside its window" in inside
    outside = st_.sliding_bar_title("L", 49, W)
    assert f"positions {50 - W} to 49" in outside and f"keys 0 to {49 - W} are outside it" in outside


def test_the_triangle_masks_keys_outside_the_window_like_the_future():
    n = 12
    z = np.tril(np.full((n, n), 1.0 / n, dtype=np.float32))
    z[np.triu_indices(n, 1)] = np.nan
    masked = fig_att.mask_outside_window(z, W)
    q, k = np.indices(z.shape)
    assert np.isnan(masked[q - k >= W]).all() and not np.isnan(masked[(q >= k) & (q - k < W)]).any()
    assert not np.isnan(fig_att.mask_outside_window(z[:W, :W], W)[np.tril_indices(W)]).any()  # before it fills
    shown = fig_att.mask_outside_window(z[4:, 4:], W, first=4)  # a window of the rows: query − key unchanged
    assert np.array_equal(np.isnan(shown), np.isnan(masked[4:, 4:]))
    fig = fig_att.triangle_figure(z, [str(i) for i in range(n)], ["prefill"] * n, 5, "t", window=W)
    hover = fig.data[1].text
    assert hover[n - 1][0].endswith(st_.OUTSIDE_WINDOW_HOVER) and "weight" in hover[n - 1][n - 1]
    full = fig_att.triangle_figure(z, [str(i) for i in range(n)], ["prefill"] * n, 5, "t")
    assert "weight" in full.data[1].text[n - 1][0]
    said = st_.sliding_triangle_text(5, n, 7, W)
    assert f"window of {W}" in said and "weight 0" not in said and "weight 0" in text.triangle_text(5, n, 7)


def test_the_worked_example_on_each_side_of_the_window():
    llama, mistral, gemma = _specs()
    ex = worked_example(llama)
    assert not st_.example_drops(llama, ex)  # the stored sentence stays
    ex = worked_example(mistral)
    assert st_.example_drops(mistral, ex)
    said = st_.sliding_worked_example_text(ex, mistral, "m", "float32")
    assert f"**{text.human_bytes(mistral.cache_bytes(150))}**" in said and "stays this size" in said
    assert mistral.cache_bytes(50) == mistral.cache_bytes(150)
    assert "adds" not in said.split("stays")[0].split("after it;")[1]
    ex = worked_example(gemma)
    said = st_.sliding_worked_example_text(ex, gemma, "g", "float32")
    adds = gemma.cache_bytes(151) - gemma.cache_bytes(150)
    assert f"each new token adds {text.human_bytes(adds)}" in said and "1 of its 2 layers" in said
    # a prompt shorter than the window: the first token adds more than a token once the windows are full
    short = worked_example(gemma, prompt_tokens=3, new_tokens=20)
    said = st_.sliding_worked_example_text(short, gemma, "g", "float32")
    assert "the first new token adds" in said and "once the windows are full" in said
    # a window longer than the whole example: nothing dropped, the stored sentence applies
    assert not st_.example_drops(mistral, worked_example(mistral, prompt_tokens=3, new_tokens=3))


def test_the_cache_chart_draws_positions_kept_for_a_sliding_model():
    llama, mistral, gemma = _specs()
    points = [CachePoint(0, "prefill", 5, 0, 0, 1.0)] + [CachePoint(i, "decode", 5 + i, 0, 0, 1.0) for i in range(1, 9)]
    full = fig_att.cache_growth_figure(points, llama.cache_bytes_per_position, llama)
    assert full.layout.title.text == st_.growth_title(llama) == "KV cache: prefill jump, then +1 row per step"
    assert full.layout.yaxis.title.text == "positions in the cache"
    sliding = fig_att.cache_growth_figure(points, mistral.cache_bytes_per_position, mistral)
    assert "flat" in sliding.layout.title.text and sliding.layout.yaxis.title.text == "positions kept per layer"
    kept = list(sliding.data[1].y)
    assert kept[:3] == [0, 5, 6] and kept[-1] == W - 1 and max(kept) == W - 1  # flat once the window is full
    assert list(sliding.data[0].y)[-1] == 13  # the text keeps growing
    mixed = fig_att.cache_growth_figure(points, gemma.cache_bytes_per_position, gemma)
    assert mixed.layout.yaxis.title.text == "positions kept, mean over layers"
    assert "slower" in mixed.layout.title.text and "flat" not in mixed.layout.title.text  # the global layers grow
    assert list(mixed.data[1].y)[-1] == (13 + W - 1) / 2
    # the bytes axis: kept positions × bytes per position = what cache_bytes counts
    assert mixed.data[1].y[-1] * gemma.cache_bytes_per_position == gemma.cache_bytes(13)
    assert st_.growth_annotation(mistral, 12, 7) == "prefill: 12 positions, 7 kept"
    assert st_.growth_annotation(mistral, 5, 5) == "prefill: +5 at once"


def test_the_formula_instance_lines_up_with_its_template():
    llama, mistral, gemma = _specs()
    assert fig_att.formula_latex(llama, 20).startswith(r"2 \times 2 \times 1 \times 2 \times 16 \times 20 \times 4")
    uniform = fig_att.formula_latex(mistral, 20)
    assert uniform.startswith(r"2 \times 2 \times 1 \times 2 \times 16 \times \underbrace{7}")
    assert f"{mistral.cache_bytes(20):,}".replace(",", "{,}") in uniform
    mixed = fig_att.formula_latex(gemma, 20)
    assert r"(1 \times 20 + 1 \times 7)" in mixed and f"{gemma.cache_bytes(20):,}".replace(",", "{,}") in mixed
    assert r"\underbrace{5}" in fig_att.formula_latex(mistral, 5)  # before the window fills: all kept


def test_the_guides_on_a_full_and_a_sliding_model():
    llama, mistral, gemma = _specs()
    full = st_.guides_for(llama, 0)
    assert list(full) == list(text.GUIDES)
    assert all(full[view] == text.GUIDES[view] for view in text.GUIDES if view != text.WHERE_IT_LOOKED)
    assert "exactly one row and one column" in text.GUIDES["2 · Causal triangle"][1]
    boxes = st_.guides_for(mistral, 0)
    assert boxes["4 · KV cache"] == st_.SLIDING_CACHE_GUIDE
    assert boxes["2 · Causal triangle"] == st_.SLIDING_TRIANGLE_GUIDE
    assert "exactly one row" not in boxes["2 · Causal triangle"][1]
    assert st_.guides_for(gemma, 1)["2 · Causal triangle"] == text.GUIDES["2 · Causal triangle"]  # its full layer
    assert st_.guides_for(gemma, 0)["2 · Causal triangle"] == st_.SLIDING_TRIANGLE_GUIDE
    for parts in (st_.SLIDING_CACHE_GUIDE, st_.SLIDING_TRIANGLE_GUIDE, pt.LEARNED_POSITIONS_GUIDE,
                  pt.NO_POSITIONS_GUIDE):
        assert len(parts) == 3 and all(len(p) > 40 and p[-1] in ".?!:" for p in parts) and parts[2].endswith("?")


def test_the_positions_guide_and_note_on_a_rotary_and_a_learned_model():
    kinds = {f: hood.positions_kind(zoo.bundle(f).model) for f in ("llama", "gpt2", "opt")}
    assert pt.guides_for(kinds["llama"]) is hood_text.GUIDES
    for family in ("gpt2", "opt"):
        boxes = pt.guides_for(kinds[family])
        assert boxes[hood_text.POSITIONS] == pt.LEARNED_POSITIONS_GUIDE and list(boxes) == list(hood_text.GUIDES)
        assert "angle" not in " ".join(boxes[hood_text.POSITIONS])
    assert "learned position vector" in pt.other_positions_note("learned", "GPT-2")
    assert "neither rotates" in pt.other_positions_note("none", "X")
    assert pt.guides_for("none")[hood_text.POSITIONS] == pt.NO_POSITIONS_GUIDE


def test_the_prefill_row_of_the_position_table_shows_a_dash_not_none():
    from types import SimpleNamespace

    rows = hood.position_rows(None, SimpleNamespace(prompt_len=3, records=[]))
    assert rows == [{"pass": "prefill", "tokens fed": 3, "position ids": "0 … 2", "token fed": pt.NO_TOKEN}]
    assert pt.NO_TOKEN == "—"


def test_the_where_try_follows_the_layer_count():
    assert "a middle one" in text.where_try(3) and "a middle one" in text.where_try(40)
    two = text.where_try(2)
    assert "the two layers" in two and "middle" not in two
    one = text.where_try(1)
    assert "layer" not in one and "between heads" in one
    assert text.GUIDES[text.WHERE_IT_LOOKED][1] == text.where_try(3)
    llama, mistral, _ = _specs()
    assert llama.n_layers == mistral.n_layers == 2
    assert [st_.guides_for(s, 0, 3)[text.WHERE_IT_LOOKED][1] for s in (llama, mistral)] == [two, two]


def test_the_where_ask_names_the_first_token_only_while_the_layer_shown_can_see_it():
    llama, mistral, gemma = _specs()
    first = text.WHERE_ASK_FIRST_TOKEN

    def ask(spec, layer, query):
        return st_.guides_for(spec, layer, query)[text.WHERE_IT_LOOKED][2]

    assert ask(mistral, 0, W - 1) == first  # the query at W − 1 sees positions 0 … W − 1
    past = ask(mistral, 0, W)  # at W the window is 1 … W: position 0 is masked
    assert past != first and "very first token" not in past
    assert f"window of {W}" in past and "position 1," in past and "weight 0" in past
    assert "position 43," in ask(mistral, 1, 50)  # the window's oldest key: 50 − 8 + 1
    assert ask(gemma, 1, 50) == first and ask(gemma, 0, 50) != first  # its full layer sees position 0
    assert ask(llama, 0, 50) == first and ask(mistral, 0, None) == first  # a full model; no row yet
    assert past.endswith("?") and st_.where_ask(W, W) == past
