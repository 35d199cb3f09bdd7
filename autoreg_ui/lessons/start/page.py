"""Start here: what the app teaches and two lesson paths, each stop a link that opens a ready page."""
import streamlit as st

from autoreg_ui import glossary, guide, lesson_path
from autoreg_ui.lessons.start import keys, text
from autoreg_ui.lessons.start import numbers as start


def render() -> None:
    """Draw the page; its entry file (``pages/start.py``) calls this on every run."""
    st.title(text.TITLE)
    glossary.terms_here("start")
    guide.show(text.GUIDES, "start")
    st.markdown(text.WHAT)
    st.markdown(text.HOW)
    st.header(text.PATHS_TITLE)
    for p, (column, path) in enumerate(zip(st.columns(len(text.PATHS)), text.PATHS.values())):
        column.subheader(text.path_title(path))
        followed = lesson_path.Path(text.path_title(path), tuple(
            lesson_path.PathStop(stop.title, stop.page, stop.params, text.minutes(stop, path), stop.do)
            for stop in path))
        column.button(text.TEACH_PATH, key=f"{keys.PATH_BEGIN}{p}", type="primary", help=text.TEACH_PATH_HELP,
                      on_click=lesson_path.begin_here, args=(followed, 0))
        for i, stop in enumerate(path):
            column.button(f"**{stop.title}**", key=f"{keys.PATH_OPEN}{p}_{i}", type="tertiary", help=text.STOP_HELP,
                          on_click=lesson_path.begin_here, args=(followed, i))
            column.caption(text.stop_line(i + 1, stop, path))
        with column.expander(text.LINKS_TITLE):
            st.markdown("\n".join(text.stop_markdown(i, stop, path) for i, stop in enumerate(path, 1)))

    numbers = start.quiz_numbers()
    for title, questions in ((text.QUIZ_TITLE, text.QUIZ), (text.MYTHS_TITLE, text.MYTHS)):
        st.header(title)
        if questions is text.QUIZ:
            st.markdown(text.QUIZ_INTRO)
        for q in questions:
            picked = st.radio(q.ask, q.choices, index=None, key=f"start_quiz_{q.key}", horizontal=True)
            if picked is not None:  # predict first: the answer opens only once a choice is made
                right = picked == q.choices[q.right]
                (st.success if right else st.warning)(f"{text.CORRECT if right else text.NOT_QUITE} "
                                                       + text.answer_text(q, numbers))
    st.header(text.FURTHER_TITLE)
    st.markdown(text.FURTHER)
