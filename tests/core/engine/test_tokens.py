"""Showing tokens honestly: bytes, partial UTF-8 characters, whitespace, and which tokenizers are byte-level."""
import pytest
from tiny import sentencepiece_tokenizer, tiny_tokenizer

from autoreg_core.engine.tokens import is_byte_level, sequence_text, token_bytes, token_views, visible_whitespace


def test_emoji_split_over_tokens_is_never_garbage(tiny):
    tok = tiny.tokenizer
    ids = tok("🙂🚀", add_special_tokens=False)["input_ids"]
    views = token_views(tok, ids)
    assert "".join(v.text for v in views) == "🙂🚀"
    assert b"".join(v.data for v in views) == "🙂🚀".encode()
    assert all("\ufffd" not in v.text for v in views)
    partial = [v for v in views if v.partial]
    assert partial and all(v.label.startswith("⟨") for v in partial)  # shown as bytes, not '�'


def test_token_pieces_and_whitespace(tiny):
    tok = tiny.tokenizer
    (tid,) = tok(" cat", add_special_tokens=False)["input_ids"]
    assert token_bytes(tok, tid) == b" cat"
    view = token_views(tok, [tid])[0]
    assert view.piece == "Ġcat" and view.label == "·cat"
    assert visible_whitespace(" \n\t") == "·↵→"
    special = token_views(tok, [tok.eos_token_id])[0]
    assert special.special and special.label == "<|im_end|>"


def test_byte_level_is_decided_by_the_tokenizer():
    assert is_byte_level(tiny_tokenizer()) is True
    assert is_byte_level(sentencepiece_tokenizer()) is False


@pytest.mark.parametrize("text", ["Émile a mangé une crème brûlée", "🙂 ok", "x ß 日本"])
def test_sentencepiece_pieces_show_their_characters(text):
    """'é' is in the GPT-2 byte table; on a SentencePiece vocabulary it must still show as 'é', not '�'."""
    tok = sentencepiece_tokenizer()
    ids = tok(text, add_special_tokens=False)["input_ids"]
    views = token_views(tok, ids)
    assert len(views) == len(ids)
    shown = "".join(v.text for v in views)
    assert "\ufffd" not in shown
    assert shown.lstrip(" ") == text == sequence_text(tok, ids)


def test_sentencepiece_byte_fallback_completes_a_character_across_tokens():
    tok = sentencepiece_tokenizer()
    ids = tok("ß", add_special_tokens=False)["input_ids"]
    pieces = tok.convert_ids_to_tokens(ids)
    assert pieces[-2:] == ["<0xC3>", "<0x9F>"]
    views = token_views(tok, ids)
    assert [v.data for v in views[-2:]] == [b"\xc3", b"\x9f"]
    assert views[-2].partial and views[-2].label == "⟨c3⟩" and views[-1].text == "ß"


def test_script_counts_on_the_embedded_tokenizer(embedded):
    from autoreg_core.engine.tokens import script_count

    english = script_count(embedded.tokenizer, "English", "The cat is sleeping on the warm mat.")
    chinese = script_count(embedded.tokenizer, "Chinese", "猫在温暖的垫子上睡觉。")
    assert (english.characters, english.utf8_bytes) == (36, 36)
    assert english.tokens == len(embedded.tokenizer(english.text, add_special_tokens=False)["input_ids"])
    assert english.partial_tokens == 0
    assert chinese.tokens_per_character > 4 * english.tokens_per_character  # measured 2.00 against 0.25
    emoji = script_count(embedded.tokenizer, "Emoji", "🐈")  # a 2-byte piece, then two 1-byte pieces
    assert (emoji.tokens, emoji.partial_tokens) == (3, 2)  # two byte pieces, then the one that completes 🐈


def test_scripts_rank_by_tokens_for_the_same_sentence_on_the_embedded_tokenizer(embedded):
    """Per character Chinese looks 8× English; for the same sentence it is about 2.4×, and Tamil costs most."""
    from autoreg_core.engine.tokens import script_count
    from autoreg_ui.lessons.tokens import text

    rows = [script_count(embedded.tokenizer, n, s) for n, s in text.SAMPLES.items()]
    by = {r.name: r for r in rows}
    assert [r.name for r in text.ranked_scripts(rows)] == ["English", "Code", "Emoji", "Chinese", "Arabic", "Tamil"]
    assert 2 < text.versus_baseline(by["Chinese"], rows) < 3  # measured 22 / 9
    assert 5 < text.versus_baseline(by["Tamil"], rows) < 7  # measured 54 / 9
    assert by["Chinese"].tokens_per_character > 6 * by["English"].tokens_per_character  # why per character misleads
    assert "The costliest is **Tamil**" in text.scripts_sentence(rows)
