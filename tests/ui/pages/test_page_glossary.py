"""The glossary page under AppTest: every term as a heading with its anchor, and the units."""
from autoreg_ui import glossary_text as glossary


def test_glossary_page_lists_every_term_and_the_units(open_page):
    at = open_page("pages/glossary.py")
    assert [s.value for s in at.subheader] == [t.name for t in glossary.all_terms()]
    assert any(m.value == glossary.UNITS for m in at.markdown)


def test_the_find_box_narrows_the_list_and_says_how_many(open_page):
    at = open_page("pages/glossary.py")
    at.text_input(key="glossary_find").input("perplexity").run()
    assert not at.exception
    shown = [s.value for s in at.subheader]
    expected = [t.name for t in glossary.all_terms() if "perplexity" in (t.name + t.meaning).lower()]
    assert shown == expected and "Perplexity" in shown and len(shown) < len(glossary.all_terms())
    assert at.caption[0].value == f"{len(expected)} of {len(glossary.all_terms())} terms match `perplexity`."
    at.text_input(key="glossary_find").input("zzzz").run()
    assert [s.value for s in at.subheader] == [] and at.caption[0].value.startswith("No term matches `zzzz`.")
