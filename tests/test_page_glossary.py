"""The glossary page under AppTest: every term as a heading with its anchor, and the units."""
from autoreg_ui import glossary_text as glossary


def test_glossary_page_lists_every_term_and_the_units(open_page):
    at = open_page("pages/7_glossary.py")
    assert [s.value for s in at.subheader] == [t.name for t in glossary.all_terms()]
    assert any(m.value == glossary.UNITS for m in at.markdown)


def test_find_a_term_keeps_the_terms_that_match(open_page):
    from autoreg_ui import glossary_text, keys

    at = open_page("pages/7_glossary.py")
    every = len(at.subheader)
    at.text_input(key=keys.GLOSSARY_FIND).set_value("KV cache").run()
    kept = [s.value for s in at.subheader]
    assert 0 < len(kept) < every and any("KV cache" in name for name in kept)
    assert at.caption[0].value == glossary_text.found_caption(len(kept), every, "KV cache")
    at.text_input(key=keys.GLOSSARY_FIND).set_value("zzzz-no-such-term").run()
    assert at.subheader == [] or len(at.subheader) == 0
    assert at.caption[0].value == "No term matches; try a shorter word."


def test_the_find_caption_counts_on_both_sides_of_one():
    assert glossary.found_caption(1, 40, "x") == "1 of 40 terms matches."
    assert glossary.found_caption(2, 40, "x") == "2 of 40 terms match."
    assert glossary.found_caption(0, 40, "x") == "No term matches; try a shorter word."
