"""The glossary where terms appear: a popover beside each page's title with the terms it shows."""
from __future__ import annotations

import streamlit as st

from autoreg_ui import glossary_text as text
from autoreg_ui import site_pages


def terms_here(page: str) -> None:
    """A folded list of this page's terms and what they mean, and a way to the whole glossary."""
    if not text.terms_on(page):
        return
    with st.popover(text.TERMS_HERE, icon=":material/menu_book:"):
        st.markdown(text.terms_markdown(page))
        st.page_link(site_pages.file("glossary"), label=text.WHOLE_GLOSSARY, icon=":material/arrow_forward:")
