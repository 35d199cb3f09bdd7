"""Every view's folded Notice / Try / Ask box (its sentences in ``guide_text``)."""
from __future__ import annotations

import streamlit as st

from autoreg_ui import guide_text


def show(view: str, notice: str | None = None, where=None) -> None:
    """The box for ``view`` (a page's tab label or section heading); a view without one shows nothing.

    ``notice``: a Notice line computed from what the page measured, in place of the general one;
    ``where``: a container to draw the box in (a place kept under a heading until the measurement is in).
    """
    if view in guide_text.GUIDES:
        with (where or st).expander(guide_text.TITLE, icon=":material/lightbulb:"):
            st.markdown(guide_text.guide_markdown(view, notice))


def header(title: str) -> None:
    """A section heading with its box right under it."""
    st.header(title)
    show(title)
