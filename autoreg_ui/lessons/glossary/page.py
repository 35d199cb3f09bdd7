"""Glossary: every term the app uses, where to see it, and the units, in one place; a box finds a term."""
import streamlit as st

from autoreg_ui import glossary_text, guide
from autoreg_ui.lessons.glossary import controller, keys, text


def render() -> None:
    """Draw the page; its entry file (``pages/glossary.py``) calls this on every run."""
    st.title(text.TITLE)
    st.markdown(glossary_text.INTRO)
    guide.show(text.GUIDES, "glossary")
    query = st.text_input(text.FIND_LABEL, key=keys.GLOSSARY_FIND, help=text.FIND_HELP,
                          placeholder=text.FIND_PLACEHOLDER)
    groups = controller.find(query or "")
    if (query or "").strip():
        total = len(glossary_text.all_terms())
        st.caption(text.found_sentence(query[:controller.MAX_QUERY], sum(len(t) for t in groups.values()), total))
    for group, terms in groups.items():
        st.header(group)
        for term in terms:
            st.subheader(term.name, anchor=term.anchor, divider=False)
            st.markdown(glossary_text.entry_markdown(term))
    st.header(glossary_text.UNITS_TITLE)
    st.markdown(glossary_text.UNITS)
