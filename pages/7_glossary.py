"""Glossary: every term the app uses, where to see it, and the units, in one place."""
import streamlit as st

from autoreg_ui import glossary_text as text
from autoreg_ui import keys

st.title("Glossary")
st.markdown(text.INTRO)
query = st.text_input(text.FIND, key=keys.GLOSSARY_FIND, help=text.FIND_HELP, icon=":material/search:")
if query.strip():
    total = sum(len(terms) for terms in text.GROUPS.values())
    shown = sum(text.matches(term, query) for terms in text.GROUPS.values() for term in terms)
    st.caption(text.found_caption(shown, total, query))
for group, terms in text.GROUPS.items():
    terms = [term for term in terms if text.matches(term, query)]
    if not terms:
        continue
    st.header(group)
    for term in terms:
        st.subheader(term.name, anchor=term.anchor, divider=False)
        st.markdown(text.entry_markdown(term))
st.header(text.UNITS_TITLE)
st.markdown(text.UNITS)
