"""Glossary: every term the app uses, where to see it, and the units, in one place."""
import streamlit as st

from autoreg_ui import glossary_text as text

st.title("Glossary")
st.markdown(text.INTRO)
for group, terms in text.GROUPS.items():
    st.header(group)
    for term in terms:
        st.subheader(term.name, anchor=term.anchor, divider=False)
        st.markdown(text.entry_markdown(term))
st.header(text.UNITS_TITLE)
st.markdown(text.UNITS)
