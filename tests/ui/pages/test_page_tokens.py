"""The tokens page under AppTest: a typed text's tokens, every script counted, typed text kept."""
from autoreg_core.engine.tokens import script_count
from autoreg_ui.lessons.tokens import text


def _table(at, column):
    tables = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(tables) == 1
    return tables[0]


def test_typed_text_becomes_its_tokens_and_the_scripts_are_counted(open_page, tiny):
    at = open_page("pages/tokens.py")
    assert at.title[0].value == text.TITLE
    at.text_area(key="tokens_text").set_value("Hello wide world").run()
    assert not at.exception, at.exception
    ids = tiny.tokenizer("Hello wide world", add_special_tokens=False)["input_ids"]
    table = _table(at, "piece")
    assert table["id"].tolist() == ids and len(table) == len(ids)
    assert text.count_sentence(len(ids), 16, 16) in [c.value for c in at.caption]
    scripts = _table(at, "script")
    counted = [script_count(tiny.tokenizer, n, s) for n, s in text.SAMPLES.items()]
    ranked = text.ranked_scripts(counted)
    assert scripts["script"].tolist() == [r.name for r in ranked]  # by tokens for the same sentence
    assert scripts["tokens"].tolist() == [r.tokens for r in ranked]


def test_an_emptied_box_says_what_to_do(open_page):
    at = open_page("pages/tokens.py")
    at.text_area(key="tokens_text").set_value("").run()
    assert [i.value for i in at.info] == [text.EMPTY]


def test_the_vocabulary_sizes_view_has_its_notice_try_ask_box(open_page):
    from autoreg_ui import guide

    at = open_page("pages/tokens.py")
    boxes = [m.value for m in at.markdown if m.value.startswith(f"**{guide.NOTICE}:**")]
    assert guide.guide_markdown(text.GUIDES, "vocabs") in boxes and len(boxes) == 3  # tokens, scripts, vocabulary sizes
