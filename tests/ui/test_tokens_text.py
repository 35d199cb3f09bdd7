"""The tokens page's sentences and tables, from counts (no model)."""
from autoreg_core.tokens import ScriptCount, TokenView
from autoreg_ui.lessons.tokens import text


def test_scripts_sentence_names_the_costliest_and_cheapest():
    rows = [ScriptCount("A", "aaaa", 4, 4, 1, 0), ScriptCount("B", "bb", 2, 6, 4, 1), ScriptCount("C", "cc", 2, 2, 1, 0)]
    assert text.scripts_sentence(rows) == ("Here **B** takes 2.00 tokens per character and **A** 0.25: "
                                           "8.0× as many for each character.")


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
    assert rows[1]["model"] == "SmolLM2 (running here)" and all(r["source"] for r in rows)
