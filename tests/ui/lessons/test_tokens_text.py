"""The tokens page's sentences and tables, from counts (no model)."""
from autoreg_core.engine.tokens import ScriptCount, TokenView
from autoreg_ui.lessons.tokens import text


def _rows(**tokens_and_chars):
    return [ScriptCount(name, "x" * chars, chars, chars, n, 0) for name, (n, chars) in tokens_and_chars.items()]


def test_scripts_are_ranked_by_tokens_for_the_same_sentence_not_per_character():
    # the embedded tokenizer's counts: per character Chinese looks 8× English, for the same sentence it is 2.4×
    rows = _rows(English=(9, 36), Chinese=(22, 11), Tamil=(54, 30), Code=(10, 31))
    assert text.scripts_sentence(rows) == ("For the same sentence English takes **9 tokens**. The costliest is "
                                           "**Tamil**: 54 tokens, **6.0×** English's; Code 1.1×, Chinese 2.4×.")
    assert [r.name for r in text.ranked_scripts(rows)] == ["English", "Code", "Chinese", "Tamil"]
    table = text.script_rows(rows)
    assert [r["script"] for r in table] == ["English", "Code", "Chinese", "Tamil"]
    assert [r["× English"] for r in table] == [1.0, 1.11, 2.44, 6.0]
    assert [r["tokens per character (side column)"] for r in table] == [0.25, 0.32, 2.0, 1.8]


def test_a_script_cheaper_than_english_is_said_to_be_cheaper():
    # on each side of the boundary (same count as English): dearer, equal, cheaper read differently
    dearer = text.scripts_sentence(_rows(English=(9, 36), X=(10, 5)))
    equal = text.scripts_sentence(_rows(English=(9, 36), X=(9, 5)))
    cheaper = text.scripts_sentence(_rows(English=(9, 36), X=(8, 5)))
    assert dearer == ("For the same sentence English takes **9 tokens**. The costliest is **X**: 10 tokens, **1.1×** "
                      "English's.")
    assert equal == "For the same sentence English takes **9 tokens**. Every script here takes as many."
    assert cheaper == "For the same sentence English takes **9 tokens**. Fewer than English: X 8."


def test_without_english_the_sentence_compares_the_extremes():
    assert text.scripts_sentence(_rows(A=(4, 2), B=(2, 4))) == ("For the same sentence **A** takes 4 tokens and "
                                                                 "**B** 2: 2.0× as many.")
    assert text.scripts_sentence([]) == ""


def test_token_rows_show_partial_characters_as_bytes():
    views = [TokenView(5, "ðŁ", b"\xf0\x9f", ""), TokenView(6, "Ġon", b" on", " on")]
    assert text.token_rows(views) == [
        {"position": 0, "id": 5, "piece": "ðŁ", "bytes": "f0 9f", "text": "⟨f0 9f⟩", "splits a character": True},
        {"position": 1, "id": 6, "piece": "Ġon", "bytes": "20 6f 6e", "text": "·on", "splits a character": False}]


def test_count_sentence():
    assert text.count_sentence(3, 12, 14) == "3 tokens for 12 characters (14 UTF-8 bytes): 0.25 tokens per character."


def test_vocabulary_table_puts_the_running_model_among_published_sizes_in_order():
    rows = text.vocab_rows("SmolLM2", 49_152)
    assert [r["vocabulary"] for r in rows] == [32_000, 49_152, 50_257, 128_256, 200_000]
    # o200k_base (tiktoken): special tokens at 199,999 and 200,018, so n_vocab = 200,019 counts the unassigned ids
    # 200,000 … 200,017 between them; about 200,000 tokens, and GPT-4o's logit width is not published
    gpt4o = next(r for r in rows if r["model"].startswith("GPT-4o"))
    assert gpt4o["vocabulary"] == 200_000 and "about 200,000 tokens" in gpt4o["source"]
    assert ("Its n_vocab, 200,019, is the largest id + 1: the special tokens sit at ids 199,999 and 200,018, and the "
            "ids between them are unassigned.") in gpt4o["source"]
    assert "output width (its number of logits) is not published" in gpt4o["source"]
    assert "GPT-4o's output width is not published" in text.VOCABS_INTRO
    assert "one entry per vocabulary token, so the vocabulary size is also the width" not in text.VOCABS_INTRO
    assert rows[1]["model"] == "SmolLM2 (running here)" and all(r["source"] for r in rows)
