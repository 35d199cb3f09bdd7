"""Every view's folded Notice / Try / Ask box (its sentences in ``guide_text``)."""
from __future__ import annotations

import streamlit as st

from . import guide_text


def show(view: str) -> None:
    """The box for ``view`` (a page's tab label or section heading); a view without one shows nothing."""
    if view in guide_text.GUIDES:
        with st.expander(guide_text.TITLE, icon=":material/lightbulb:"):
            st.markdown(guide_text.guide_markdown(view))


def header(title: str) -> None:
    """A section heading with its box right under it."""
    st.header(title)
    show(title)
