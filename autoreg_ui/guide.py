"""Every view's folded Notice / Try / Ask box. The sentences live with their lesson: each lesson's ``text.GUIDES``
(class mode's in ``classroom.text``), keyed by the view's own heading or tab label, and passed in here."""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from autoreg_ui.sharing import presenter

Guides = Mapping[str, tuple[str, str, str]]  # view label → (notice, try, ask)

TITLE = "Notice · Try · Ask"
NOTICE, TRY, ASK = "Notice", "Try", "Ask"


def guide_markdown(guides: Guides, view: str, notice: str | None = None) -> str:
    """The three lines of a view's box (``notice``: one computed from a measurement, in place of the stored one)."""
    stored, try_this, ask = guides[view]
    notice = notice or stored
    return f"**{NOTICE}:** {notice}\n\n**{TRY}:** {try_this}\n\n**{ASK}:** {ask}"


def show(guides: Guides, view: str, notice: str | None = None, where=None) -> None:
    """The box for ``view`` (a page's tab label or section heading) from ``guides``; a view without one shows nothing.

    ``notice``: a Notice line computed from what the page measured, in place of the general one;
    ``where``: a container to draw the box in (a place kept under a heading until the measurement is in).
    """
    if view in guides:
        # open, so the prompts are read before the first click; on a projector the path's note takes their place
        with (where or st).expander(TITLE, icon=":material/lightbulb:", expanded=not presenter.active()):
            st.markdown(guide_markdown(guides, view, notice))


def header(guides: Guides, title: str) -> None:
    """A section heading with its box right under it."""
    st.header(title)
    show(guides, title)


DERIVATION_ICON = ":material/functions:"


def derivation(label: str, where=None):
    """A closed box for a derivation (a formula, a FLOP or byte count, a standard error, a unit's meaning).

    Closed in every mode: the measurement and its prompts come first, the working is one click away.
    ``label``: the box's title, from the lesson's text module; ``where``: a container to draw it in.
    """
    return (where or st).expander(label, icon=DERIVATION_ICON, expanded=False)
