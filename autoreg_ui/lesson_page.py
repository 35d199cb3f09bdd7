"""The head every lesson page starts with, written once: its title, its terms, its predict-then-check box and its
introduction, then the model (the page stops there when none can be loaded)."""
from __future__ import annotations

import streamlit as st

from autoreg_core.engine.loading import ModelBundle
from autoreg_ui import glossary, guide, lesson_page_text, predict
from autoreg_ui.sharing import presenter
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import bundle_or_stop


def set_up(title: str, page: str, questions: tuple[predict.Question, ...], intro: str | None = None, *,
           caption: str | None = None, latex: str | None = None, latex_label: str | None = None,
           guides: guide.Guides | None = None, fold_intro: bool = False) -> ModelBundle:
    """Draw a lesson page's head in the order every lesson page uses, and return the loaded model.

    ``page``: the page's name (its glossary terms, its widget keys); ``questions``: its lesson's ``QUESTIONS``;
    ``intro``: an explanation under the questions (folded in presenter mode); ``caption``, ``latex``: shown next,
    in that order (``latex`` in a closed derivation box titled ``latex_label`` when given); ``guides``: the
    lesson's boxes, when the page shows the one named ``page`` under its title; ``fold_intro``: the explanation,
    caption and formula in one closed expander (as in presenter mode), so what a click changes is on the first
    screen once the learner has read them.
    """
    if presenter.active():  # on a projector: the title, its terms and the folded explanation on one line
        head, terms, folded = st.columns([4, 2, 2], vertical_alignment="center")
        head.title(title)
        with terms:
            glossary.terms_here(page)
        with folded:
            presenter.fold(intro, caption, latex)
        if guides is not None:
            guide.show(guides, page)
    else:
        st.title(title)
        if guides is not None:
            guide.show(guides, page)
        glossary.terms_here(page)
    if page in BY_THE_STEP_BUTTONS:
        predict.defer(page, questions)  # drawn next to Next token, asked again at each step
    else:
        st.session_state.pop(predict.DEFERRED, None)
        predict.show(page, questions)  # asked before the page shows its answers
    if presenter.active():
        return bundle_or_stop()
    if fold_intro:
        presenter.fold(intro, caption, latex)
        return bundle_or_stop()
    if intro is not None:
        first, rest = first_paragraph(intro)
        explain(first)
        if rest:  # the first paragraph says what the page shows; the rest waits under it, so the picture comes sooner
            st.expander(lesson_page_text.MORE).markdown(rest)
    if caption is not None:
        st.caption(caption)
    if latex is not None and latex_label:
        with guide.derivation(latex_label):
            st.latex(latex)
    elif latex is not None:
        st.latex(latex)
    return bundle_or_stop()


def first_paragraph(intro: str) -> tuple[str, str]:
    """An introduction's first paragraph and the paragraphs after it ("" when it has one)."""
    first, _, rest = intro.strip().partition("\n\n")
    return first.strip(), rest.strip()


BY_THE_STEP_BUTTONS = ("step", "attention", "sampling", "cost", "inside", "serving")  # pages with a Next token
