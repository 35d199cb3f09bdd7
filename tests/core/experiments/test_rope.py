"""Positions: the rotation matches transformers' ``apply_rotary_pos_emb``; a cached key is the key recomputed at its
position; a step one position off changes the logits, a whole text shifted does not; left padding's position ids."""
from __future__ import annotations

import pytest
import torch
from tiny import varied_bundle
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from autoreg_core.experiments import rope as positions

TEXT = [5, 77, 120, 33, 250, 19, 64, 201, 90, 12, 140]


def test_rope_settings_come_from_the_config(tiny):
    rope = positions.rope_of(tiny.config)
    assert (rope.base, rope.head_dim, rope.pairs, rope.rope_type) == (10000.0, 16, 8, "default")
    assert torch.allclose(positions.frequencies(rope).float(), tiny.model.model.rotary_emb.inv_freq, atol=1e-7)
    assert positions.angles(rope, 0).tolist() == [0.0] * 8
    assert positions.angles(rope, 3)[0] == 3.0 and positions.angles(rope, 3)[-1] == pytest.approx(3 * 1e4 ** (-14 / 16))


@pytest.mark.parametrize("base,head_dim", [(10000.0, 16), (100000.0, 64), (500000.0, 128)])
def test_the_rotation_matches_transformers_apply_rotary_pos_emb(tiny, base, head_dim):
    config = tiny.config.__class__(**{**tiny.config.to_dict(), "head_dim": head_dim,
                                      "rope_parameters": {"rope_theta": base, "rope_type": "default"}})
    rope = positions.rope_of(config)
    assert (rope.base, rope.head_dim) == (base, head_dim)
    gen = torch.Generator().manual_seed(int(base) % 1000 + head_dim)
    q, k = torch.randn(2, 4, 7, head_dim, generator=gen), torch.randn(2, 2, 7, head_dim, generator=gen)
    pos = torch.tensor([[0, 1, 2, 9, 40, 255, 1000]] * 2)
    cos, sin = LlamaRotaryEmbedding(config)(q, position_ids=pos)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    q_ours, k_ours = positions.rotate(q, pos[0], rope), positions.rotate(k, pos[0], rope)
    assert q_ours.shape == q_ref.shape and k_ours.shape == k_ref.shape
    assert float((q_ours - q_ref).abs().max()) < 1e-4 and float((k_ours - k_ref).abs().max()) < 1e-4
    assert float((positions.rotate(q, pos[0] + 1, rope) - q_ref).abs().max()) > 0.1  # a wrong position fails


def test_a_rotation_keeps_length_and_depends_only_on_the_distance(tiny):
    rope = positions.rope_of(tiny.config)
    q, k = torch.randn(1, 16), torch.randn(1, 16)
    assert torch.allclose(positions.rotate(q, [37], rope).norm(), q.norm(), atol=1e-5)
    near = float((positions.rotate(q, [10], rope) * positions.rotate(k, [7], rope)).sum())
    far = float((positions.rotate(q, [110], rope) * positions.rotate(k, [107], rope)).sum())
    other = float((positions.rotate(q, [110], rope) * positions.rotate(k, [100], rope)).sum())
    assert near == pytest.approx(far, abs=1e-4) and abs(other - near) > 1e-3


def test_step_positions_count_from_the_cache_length():
    assert positions.step_positions(0, 5) == [0, 1, 2, 3, 4]
    assert positions.step_positions(12, 1) == [12]


@pytest.mark.parametrize("layer,at", [(0, 0), (1, 4), (1, 10)])
def test_a_cached_key_is_the_key_recomputed_at_its_own_position(layer, at):
    bundle = varied_bundle()
    check = positions.check_cached_key(bundle, TEXT, at, layer=layer)
    assert len(check.cached) == len(check.recomputed) == len(check.unrotated) == 16
    assert check.gap < 1e-4
    assert check.gap_other_position > 1e-2  # rotated for another position, it is another key
    if at > 0:
        assert check.gap_unrotated > 1e-2  # position 0 is no rotation at all
    else:
        assert check.gap_unrotated < 1e-4
    with pytest.raises(ValueError):
        positions.check_cached_key(bundle, TEXT, len(TEXT), layer=0)


def test_off_by_one_moves_the_logits_and_a_whole_shift_does_not():
    bundle = varied_bundle()
    shifted = positions.shifted_step(bundle, TEXT)
    assert shifted.position == len(TEXT) - 1 and shifted.shift == 1
    assert len(shifted.top_right) == len(shifted.top_last_off) == len(shifted.top_all_off) == 5
    assert shifted.max_delta_last > 0.1 and shifted.kl_last_bits > 1e-3
    assert shifted.max_delta_all < 1e-3 and shifted.kl_all_bits < 1e-6
    assert shifted.top_all_off == shifted.top_right
    still = positions.shifted_step(bundle, TEXT, shift=0)
    assert still.max_delta_last == 0.0 and not still.top_changed_last


def test_kl_in_bits_is_zero_for_the_same_and_one_bit_for_a_certain_coin():
    x = torch.tensor([0.0, 0.0])
    assert positions.kl_bits(x, x) == 0.0
    assert positions.kl_bits(torch.tensor([50.0, -50.0]), x) == pytest.approx(1.0, abs=1e-9)


def test_a_left_padded_row_needs_its_own_position_ids():
    bundle = varied_bundle()
    short, long = TEXT[:4], TEXT + [7, 8, 9]
    padded = positions.padded_positions(bundle, short, long)
    assert padded.lengths == [3, 13] and padded.width == 13
    assert padded.own_positions == [3, 13] and padded.column_positions == [13, 13]
    assert padded.max_delta_own < 1e-3  # its own positions: what it computes alone
    assert padded.max_delta_column > 0.1  # columns counted: ten positions too far
    with pytest.raises(ValueError):
        positions.padded_positions(bundle, [5], long)


@pytest.mark.integration
def test_on_the_embedded_model_rotation_cached_key_and_off_by_one(embedded):
    rope = positions.rope_of(embedded.config)
    assert (rope.base, rope.head_dim, rope.rope_type) == (100000.0, 64, "default")
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 9, 5, 64, generator=gen), torch.randn(1, 3, 5, 64, generator=gen)
    pos = torch.tensor([[0, 4, 17, 300, 2047]])
    cos, sin = embedded.model.model.rotary_emb(q, position_ids=pos)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    tolerance = 1e-5 + 2e-7 * 2047  # transformers' angles are float32: pos × inv_freq rounds by ~pos × 1e-7 rad
    assert float((positions.rotate(q, pos[0], rope) - q_ref).abs().max()) < tolerance
    assert float((positions.rotate(k, pos[0], rope) - k_ref).abs().max()) < tolerance
    assert float((positions.rotate(k, pos[0] + 1, rope) - k_ref).abs().max()) > 0.01  # one position off fails
    ids = list(embedded.tokenizer("The cat sat on the mat and looked at the door.")["input_ids"])
    check = positions.check_cached_key(embedded, ids, 6, layer=29, kv_head=2)
    assert check.gap < 1e-4 and check.gap_unrotated > 1e-2 and check.gap_other_position > 1e-2
    shifted = positions.shifted_step(embedded, ids)
    assert shifted.max_delta_last > 1e-2 and shifted.max_delta_all < 1e-3
