"""The attention page's sentences for models of other shapes: no GQA, no recomputable row."""
from autoreg_core.engine.model_spec import ModelSpec
from autoreg_ui.lessons.attention import controller as ac
from autoreg_ui.lessons.attention import text
from tests import zoo


def test_the_gqa_sentence_on_each_side_of_a_group_of_one():
    gpt2, llama = zoo.bundle("gpt2").spec, zoo.bundle("llama").spec
    assert (gpt2.gqa_group, llama.gqa_group) == (1, 2)
    plain = text.gqa_text("tiny-gpt2", gpt2, gpt2.gqa_group, 10)
    assert "one K/V head for each" in plain and "caches only" not in plain
    # 4 query heads grouped 4 to a K/V head: the cache 4× smaller, computed from the shape
    assert text.example_group(gpt2.n_heads) == 4
    assert f"would hold {text.human_bytes(gpt2.cache_bytes(10) // 4)}: **4× smaller**" in plain
    grouped = text.gqa_text("tiny-llama", llama, llama.gqa_group, 10)
    assert "caches only **2 K/V heads**" in grouped and "**2× more**" in grouped


def test_a_model_whose_heads_no_small_group_divides_gets_no_grouping_sentence():
    assert [text.example_group(n) for n in (12, 9, 10, 7, 1)] == [4, 3, 2, 1, 1]
    odd = ModelSpec.preset("odd", n_layers=1, n_heads=7, n_kv_heads=7, head_dim=8, hidden=56, vocab=10,
                           n_params=1000, seq_len=4)
    sentence = text.no_gqa_text("odd", odd, 4)
    assert "Had its" not in sentence and sentence.endswith(f"the cache holds {text.human_bytes(odd.cache_bytes(4))}.")


def test_a_missing_row_is_offered_a_backfill_only_when_the_model_can_be_recomputed():
    assert ac.missing_row(True, "Llama") == ("warning", text.NOT_CAPTURED, True)
    level, why, offer = ac.missing_row(False, "GPT-2")
    assert (level, offer) == ("info", False)
    assert "GPT-2" in why and "not captured" not in why and "another page" not in why


def _cache_after(family: str, n: int):
    from autoreg_core.engine import decode
    from autoreg_core.engine import kv_cache as kvc

    bundle = zoo.bundle(family)
    cache = decode.new_cache(bundle)
    decode.forward(bundle, list(range(5, 5 + n)), cache)
    spec = bundle.spec
    return (kvc.measured_bytes(cache), spec.cache_bytes(n), spec.cache_bytes_per_position, kvc.layer_shapes(cache), n,
            spec.layer_windows)


def test_the_cache_reading_on_each_side_of_the_sliding_window():
    before = _cache_after("mistral", zoo.WINDOW - 2)  # the next token still grows every layer
    level, said = ac.cache_reading(*before, "Mistral")
    assert level == "success" and said.startswith("Equal, byte for byte") and "sliding" not in said
    # window − 1 positions: every sliding layer holds all it keeps, so the next token adds nothing (not 512 B)
    at = _cache_after("mistral", zoo.WINDOW - 1)
    level, said = ac.cache_reading(*at, "Mistral")
    assert level == "success" and "2 of the 2 layers" in said and "stays this size" in said and "adds" not in said
    measured, formula, per, shapes, n, windows = _cache_after("mistral", 20)
    assert measured == formula  # the formula counts the positions each sliding layer keeps
    level, said = ac.cache_reading(measured, formula, per, shapes, n, windows, "Mistral")
    assert level == "success" and f"last {zoo.WINDOW - 1} positions" in said and "stays this size" in said
    measured, formula, per, shapes, n, windows = _cache_after("gemma2", 20)
    level, said = ac.cache_reading(measured, formula, per, shapes, n, windows, "Gemma 2")
    assert "1 of the 2 layers of this Gemma 2 model attends" in said and "sliding window of 8 positions" in said
    assert "it has stopped growing" in said
    assert f"now adds {shapes[1].nbytes // 20:,} B, in the other layers" in said  # the full layer's K and V
    # a gap the window does not explain is an error, not a sliding-window sentence
    assert ac.cache_reading(measured - 2, formula, per, shapes, n, windows, "Gemma 2")[0] == "error"
    measured, formula, per, shapes, n, windows = _cache_after("llama", 20)
    assert ac.cache_reading(measured, formula, per, shapes, n, windows, "Llama")[0] == "success"
    assert ac.cache_reading(measured - 2, formula, per, shapes, n, windows, "Llama")[0] == "error"  # no window: a gap


def test_the_filled_in_formula_counts_what_each_sliding_layer_keeps():
    from autoreg_ui.lessons.attention import figures as fig_att

    spec = zoo.bundle("gemma2").spec
    latex = fig_att.formula_latex(spec, 20)
    assert latex.startswith(r"2 \times \underbrace{(1 \times 20 + 1 \times 7)}_{\text{layers} \times "
                            r"\text{positions kept}} \times 1 \times 2 \times 16 \times 4 = ")
    assert latex.endswith(f"{spec.cache_bytes(20):,}".replace(",", "{,}") + r"\ \text{bytes}")
    assert 2 * 27 * 2 * 16 * 4 == spec.cache_bytes(20)
    assert fig_att.formula_latex(spec, 6).startswith(  # inside the window every layer keeps all 6 positions
        r"2 \times 2 \times 1 \times 2 \times 16 \times \underbrace{6}_{\text{positions kept}} \times 4 = ")


def test_the_plain_weights_sentence_counts_every_cached_token():
    plain = text.weights_text(16, 20)
    assert "exactly **20** weights" in plain and "$20\\times16$" in plain
