"""Class mode: a teacher's tab leads, students' tabs follow, guess the next token and sample together.

This is the lesson's entry: it reads a tab's place in a class from its address, keeps it there, watches the
class for news, and draws the Class page (the teacher's desk, ``class_teacher``; a student's seat,
``class_student``) or, for a following student, the step page. What the tabs share in the process (the class
store, the teacher's live text) is built by ``class_live`` and kept by ``autoreg_server.live_classes``; the class
itself is kept in ``autoreg_server.class_store`` (SQLite, or PostgreSQL when replicas share classes).
"""
from __future__ import annotations

import time

import streamlit as st

from autoreg_server.class_store import ClassError, ClassInfo, normal_code
from autoreg_ui import glossary, keys, messages, site_pages
from autoreg_ui.classroom import desk as class_desk
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import student as class_student
from autoreg_ui.classroom import teacher as class_teacher
from autoreg_ui.classroom import text
from autoreg_ui.classroom.live import is_follower, is_student, is_teacher, source, store

PAGE = site_pages.file("class")
POLL_S = 1.0  # the teacher's tab checks the class's counters this often (one indexed read)


# ---------------------------------------------------------------- who this tab is
def read_link(state, query) -> None:
    """Take ``class``/``key``/``seat`` from the address into the tab's state (every run: cheap, and a tab that
    reconnects after a restart has an empty state but the same address). A key the class does not accept is
    refused with a message, once per key."""
    code = normal_code(query.get("class", ""))
    if not code:
        return
    if state.get(keys.CLASS_CODE) != code:
        for name in (keys.CLASS_KEY, keys.CLASS_SEAT, keys.CLASS_DRAWN, keys.CLASS_PUBLISHED):
            state.pop(name, None)
        state[keys.CLASS_CODE] = code
        state.setdefault(keys.CLASS_MODE, "following")
    key = query.get("key")
    if key and keys.CLASS_KEY not in state and state.get(keys.CLASS_KEY_REFUSED) != key:
        try:
            if not (store().is_teacher(code, key) and store().info(code) is not None):
                # the right key is checked before any rate limit (it always works); a wrong one is counted
                # against this tab's address and slowed there
                store().claim_teacher(code, key, source=source())
            state[keys.CLASS_KEY] = key
        except ClassError as exc:
            state[keys.CLASS_KEY_REFUSED] = key
            messages.say(str(exc), "error", state)
    if query.get("seat") and keys.CLASS_SEAT not in state and keys.CLASS_KEY not in state:
        seat = store().student(code, query["seat"])
        if seat is not None and not seat.removed:
            state[keys.CLASS_SEAT] = seat.student
        elif seat is not None:  # a removed student's tab reconnecting (a reload, a restart): it says why it left
            messages.say(text.REMOVED_YOU, "warning", state)
            del query["seat"]


def keep_in_url(state, query) -> None:
    """The tab's class, key (teacher) or seat (student) stay in its address on every page, so a reload or a
    restarted server brings the tab back to its place in the class."""
    if not state.get(keys.CLASS_CODE):
        return
    wanted = {"class": state.get(keys.CLASS_CODE), "key": state.get(keys.CLASS_KEY),
              "seat": state.get(keys.CLASS_SEAT)}
    for name, value in wanted.items():
        if value and query.get(name) != value:
            query[name] = value
        elif not value and name in query:
            del query[name]


def wants_class_page(query) -> bool:
    """``/?class=CODE`` (the join link) opens the Class page."""
    return bool(normal_code(query.get("class", "")))


# ---------------------------------------------------------------- every tab of a class
def watch(state) -> None:
    """The teacher's page: every POLL_S, when the class moved since this page was drawn (what students send, or
    another teacher tab), redraw the whole page. A student's page follows the class's feed instead (``hall``)."""
    code = state.get(keys.CLASS_CODE)

    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        if store().pulse(code) != state.get(keys.CLASS_DRAWN):
            st.rerun(scope="app")
    poll()


def drawn(state, info: ClassInfo, teacher: bool) -> None:
    """What this page was drawn from (``watch`` redraws when the class moves past it)."""
    state[keys.CLASS_DRAWN] = (info.version, info.activity) if teacher else info.version


HEARTBEAT = "class_heartbeat"  # (code, seat, mode, page, when) this tab last wrote to the store
HEARTBEAT_S = 60.0  # a student in the same place writes ``seen`` at most this often


def heartbeat_due(last, place: tuple, now: float, every: float = HEARTBEAT_S) -> bool:
    """Whether a tab at ``place`` (code, seat, mode, page) should write it: a new place at once, the same one
    after ``every`` seconds. A follower's page is redrawn on every teacher step; a write each time would put
    every follower of a lecture through the store's one write lock on every step."""
    return last is None or tuple(last[:4]) != place or now - last[4] >= every


def heartbeat(page_name: str) -> None:
    """A student's tab says which page it is on (the teacher sees counts, never transcripts)."""
    state = st.session_state
    if is_student(state):
        place = (state[keys.CLASS_CODE], state[keys.CLASS_SEAT], state.get(keys.CLASS_MODE, "following"),
                 page_name or "step")
        now = time.monotonic()
        if not heartbeat_due(state.get(HEARTBEAT), place, now):
            return
        try:
            store().seen(*place)
            state[HEARTBEAT] = (*place, now)
        except ClassError:
            pass


def start_class_button(where, key: str = keys.CLASS_START) -> None:
    """Start a class: in the sidebar, or on the Class page (then it opens the teacher's desk right there)."""
    if where.button(text.START_BUTTON, key=key, help=text.START_HELP):
        class_desk.create_class(switch=True)


def start_in_sidebar(state) -> bool:
    """Whether the sidebar offers Start a class: not while a lesson path is followed (its bar has the button)
    nor on the Class page (the page has it), so the sidebar is never needed during a lesson."""
    from autoreg_ui import lesson_path

    if state.get(keys.CLASS_CODE) or lesson_path.current(state) is not None:
        return False
    url = str(getattr(st.context, "url", "") or "")
    return url.split("?")[0].rstrip("/").rsplit("/", 1)[-1] != "class"


def render() -> None:
    """The Class page: the teacher's desk, a student's seat, or the join form. A student's page is phone-first:
    their seat (the text, the guess box, the score) comes first and the introduction is folded away below."""
    state = st.session_state
    code = state.get(keys.CLASS_CODE)
    # before the counters are read: this page's own publishing must not look like news
    class_live.publish(state, redraw=False)
    info = store().info(code) if code else None
    if code and info is None:
        seat_gone(state, say=False)  # the warning below says it
    teacher = info is not None and is_teacher(state)
    seated = info is not None and not teacher and is_student(state)
    joined = teacher and any(not s.removed for s in store().students(code))
    if teacher:
        st.title(text.TITLE)
        glossary.terms_here("class")
        if not joined:  # once students are in, the desk comes first; the introduction is folded below it
            st.markdown(text.INTRO)
    elif not seated:
        st.title(text.TITLE)
    with st.container():  # a message comes and goes: in one block, what follows keeps its place (student.view)
        messages.show()
        if code and info is None:
            st.warning(text.CLASS_GONE)
    if not (teacher or seated):
        if not code or info is None:  # a tab in no class: a teacher starts one here
            st.caption(text.START_HERE)
            start_class_button(st, keys.CLASS_START + "_page")
        class_student.join_form(code if info else "")
        about()
        return
    drawn(state, info, teacher)
    if teacher:
        class_teacher.view(info)
        if joined:
            about()
    else:
        class_student.view(info, on_class_page=True)
        about()
    if teacher:  # a student's page follows the class's feed (``class_student.view``), not a poll
        watch(state)


def seat_gone(state, say: bool) -> None:
    """A seated student whose class ended or expired: the seat goes and the page runs again, so that its sidebar
    (a follower's leaves the learner's own settings out) is the learner's own again."""
    if not is_student(state):
        return
    state.pop(keys.CLASS_SEAT, None)
    if say:
        messages.say(text.CLASS_GONE, "warning", state)
    st.rerun()


def about() -> None:
    """What class mode is, folded away below a student's seat or the join form."""
    with st.expander(text.ABOUT_CLASS):
        st.markdown(text.INTRO)
        glossary.terms_here("class")


def follow_here() -> bool:
    """On the step page: a following student sees the teacher's text instead of their own (True: drawn); an
    exploring student gets a way back to following above their own text (False: the page goes on)."""
    state = st.session_state
    if not is_student(state):
        return False
    info = store().info(state[keys.CLASS_CODE])
    if info is None:
        seat_gone(state, say=True)
        return False
    if not is_follower(state):
        class_student.explore_bar(info)
        return False
    drawn(state, info, teacher=False)
    class_student.view(info, on_class_page=False)
    return True
