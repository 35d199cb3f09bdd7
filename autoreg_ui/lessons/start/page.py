"""Start here: what the app teaches and two lesson paths, each stop a link that opens a ready page."""
import streamlit as st

from autoreg_ui import controls, glossary, guide, lesson_path, messages, site_pages
from autoreg_ui import keys as site_keys
from autoreg_ui.lessons.start import keys, text
from autoreg_ui.lessons.start import numbers as start
from autoreg_ui.state import current_session, kept_prompt, start_session
from autoreg_ui.step_figures import session_views, strip_memo, token_strip_html


def try_next() -> None:
    """The "Try it now" button: the typed prompt becomes the text (the step page's too), then one decode step."""
    typed = str(st.session_state.get(keys.TRY_PROMPT, "")).strip()
    session = current_session()
    if typed and (session is None or session.chat or session.prompt != typed):
        st.session_state[site_keys.PROMPT_KEPT], st.session_state[site_keys.CHAT_KEPT] = typed, False
        if start_session(typed, False) is None:
            return  # a bad prompt: its message is shown in the box
    controls.next_token()


# The link's label wraps in a narrow column (the sidebar open); the margin gives back the room a Markdown
# block's negative bottom margin takes from the strip above it (its chips are taller on a projector).
MORE_WRAPS_CSS = ("<style>.st-key-try_more a p, .st-key-try_more a span { white-space: normal !important; "
                  "overflow: visible !important; text-overflow: clip !important; }"
                  ".st-key-try_more { margin-top: 1.4rem !important; }</style>")


def try_it_now() -> None:
    """A prompt, Next token and the text as it grows: a learner's first click, before any path."""
    session = current_session()
    if keys.TRY_PROMPT not in st.session_state:
        st.session_state[keys.TRY_PROMPT] = session.prompt if session is not None else kept_prompt()[0]
    with st.container(border=True):
        st.subheader(text.TRY_TITLE)
        st.text_input(text.TRY_PROMPT, key=keys.TRY_PROMPT, max_chars=500)
        st.button(text.TRY_NEXT, key=keys.TRY_NEXT, type="primary", on_click=try_next, help=text.TRY_NEXT_HELP)
        messages.show()
        session = current_session()
        if session is not None and session.records:
            st.markdown(token_strip_html(session_views(session), session.records, session.prompt_len,
                                         memo=strip_memo(session)), unsafe_allow_html=True)  # every piece escaped
            more = st.container(key="try_more")
            more.html(MORE_WRAPS_CSS)
            more.page_link(site_pages.file("step"), label=text.TRY_MORE, icon=":material/play_arrow:")
        else:
            st.caption(text.TRY_WAITING)


def render() -> None:
    """Draw the page; its entry file (``pages/start.py``) calls this on every run."""
    st.title(text.TITLE)
    glossary.terms_here("start")
    trying, reading = st.columns([1, 1])  # a learner's first click beside what the app is and how teachers use it
    with trying:
        try_it_now()
    with reading:
        st.markdown(text.WHAT)
        st.subheader(text.TEACH_TITLE)
        st.markdown(text.HOW)
    guide.show(text.GUIDES, "start")  # the teachers' Notice / Try / Ask, beside their paths
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
