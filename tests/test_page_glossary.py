"""The glossary page under AppTest: every term as a heading with its anchor, and the units."""
from autoreg_ui import glossary_text as glossary


def test_glossary_page_lists_every_term_and_the_units(open_page):
    at = open_page("pages/7_glossary.py")
    assert [s.value for s in at.subheader] == [t.name for t in glossary.all_terms()]
    assert any(m.value == glossary.UNITS for m in at.markdown)
