"""The positions lesson on models of other families: learned tables, partial rotation, the checks that apply."""
import pytest

from autoreg_core.experiments import rope
from autoreg_ui.lessons.hood import controller as hood
from autoreg_ui.lessons.hood import positions_text, questions, text
from tests import zoo


def test_each_family_is_read_as_learned_or_rotary_and_the_key_check_only_where_it_applies():
    kinds = {f: hood.positions_kind(zoo.bundle(f).model) for f in zoo.FAMILIES}
    assert kinds == {"gpt2": "learned", "gpt_neox": "rotary", "opt": "learned", "phi3": "rotary", "llama": "rotary",
                     "qwen2": "rotary", "qwen3": "rotary", "mistral": "rotary", "gemma2": "rotary"}
    applies = [f for f in zoo.FAMILIES if hood.key_check_applies(zoo.bundle(f).model)]
    # every rotary family: the check reads fused projections (GPT-NeoX, Phi-3) and partial rotation (GPT-NeoX) too
    assert applies == ["gpt_neox", "phi3", "llama", "qwen2", "qwen3", "mistral", "gemma2"]
    names = {f: hood.key_check_projection(zoo.bundle(f).model) for f in ("gpt_neox", "phi3", "llama")}
    assert names == {"gpt_neox": "the key part of the fused q/k/v projection of norm(h)",
                     "phi3": "the key part of the fused q/k/v projection of norm(h)", "llama": "k_proj(norm(h))"}
    partial = text.key_sentence(1e-7, 1.0, 2.0, 5, 1, names["gpt_neox"], 4, 16)
    assert "fused q/k/v projection of norm(h) with its first 4 of 16 dimensions turned by θ at 5" in partial


@pytest.mark.parametrize("family, offset", [("gpt2", 0), ("opt", 2)])
def test_a_row_of_the_learned_table_is_read_from_the_weights(family, offset):
    model = zoo.bundle(family).model
    table, found = hood.position_table(model)
    assert found == offset
    rows = table.weight.shape[0] - offset
    assert rows == zoo.POSITIONS
    v = hood.position_vector(model, 5)
    assert v.norm == pytest.approx(float(table.weight[offset + 5].norm()), rel=1e-6) and v.width == zoo.HIDDEN
    assert v.next_cosine is not None and hood.position_vector(model, rows - 1).next_cosine is None  # the last row
    with pytest.raises(ValueError):
        hood.position_vector(model, rows)


def test_the_rotated_part_of_a_head_is_read_from_the_config():
    neox, llama = rope.rope_of(zoo.config("gpt_neox")), rope.rope_of(zoo.config("llama"))
    assert (neox.head_dim, llama.head_dim) == (4, 16)  # a quarter of NeoX's 16 dimensions
    partial = text.rope_sentence(neox.base, neox.head_dim, neox.rope_type, of_head=16)
    assert "only the first d = 4 of each head's 16 dimensions" in partial and "2 pairs" in partial
    whole = text.rope_sentence(llama.base, llama.head_dim, llama.rope_type, of_head=16)
    assert "head dimension d = 16, so 8 pairs" in whole and "only the first" not in whole


def test_the_shift_sentence_for_learned_positions_on_each_side_of_its_boundary():
    small = positions_text.learned_shift_sentence(1, 2.0, 0.5, True, text.AGREE * 10 / 2, 1e-6)
    large = positions_text.learned_shift_sentence(1, 2.0, 0.5, True, 1.5, 0.2)
    assert "changes almost nothing" in small and "changes **as well**" in large
    assert "neighbouring rows" in small and "neighbouring rows" not in large
    assert all("absolute" in s and "rotary" not in s for s in (small, large))
    assert "rotary positions only encode" in text.shift_sentence(1, 2.0, 0.5, True, 1e-6, 1e-9)


@pytest.mark.parametrize("delta_all", [text.AGREE * 10 / 2, text.AGREE * 10])  # each side of "almost nothing"
@pytest.mark.parametrize("changed", [True, False])
def test_every_variant_of_the_learned_shift_sentence_reads_as_one_clause_list(delta_all, changed):
    said = positions_text.learned_shift_sentence(1, 2.0, 0.5, changed, delta_all, 1e-6)
    assert ",," not in said and " ," not in said and "  " not in said
    tail = said[said.index("another row of the table"):]
    assert tail in ("another row of the table: another input, not only the same distances.",
                    "another row of the table, yet the logits hardly move: its neighbouring rows, or its use of them, "
                    "differ little.")
    assert (tail.endswith("not only the same distances.")) == (delta_all >= text.AGREE * 10)
    assert "not the same distances" not in said  # the whole shift keeps every distance: the rows change, not them


def test_why_the_key_check_is_skipped_names_the_models_own_layout():
    learned = positions_text.key_check_skipped("learned", "GPT-2")
    assert "before the first layer" in learned and "key projection of its input, which already carries" in learned
    assert "no rotary embeddings" in positions_text.key_check_skipped("none", "Bloom")
    assert "cannot read those in Foo's attention layers" in positions_text.key_check_skipped("rotary", "Foo")
    assert "ALiBi" in positions_text.no_positions_explain("BLOOM")  # not "the causal mask alone" for BLOOM


def test_the_whole_shift_question_answers_with_the_models_own_kind_of_positions(monkeypatch):
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.predict import Live

    for family, reading in (("gpt2", "learned vector for each absolute position"), ("llama", "rotary positions")):
        bundle = zoo.bundle(family)
        live = Live(bundle, Session(bundle, "The cat sat on the mat", chat=False), SamplingConfig())
        assert reading in questions.whole_shift(live).answer
