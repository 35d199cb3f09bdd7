"""The class desk under the lesson path's bar: Ask, Reveal and Everyone sample from wherever the teacher stands.

A teacher running a class stays on the lesson's stop: the desk asks the class about the next token of the text
on screen, counts the answers as they come in, reveals (the step is taken here, as on the Class page), and
starts a sampling round; the reveal's chart and the round's tree open in a popover, so the stop's own view stays
where it is. A tab in no class gets Start a class here instead of in the sidebar. The Class page is the full
desk (the code, seats, options, record); this row is drawn everywhere else.
"""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from autoreg_server.class_store import ClassError
from autoreg_ui import keys, messages, site_pages
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import teacher, text
from autoreg_ui.classroom.live import is_student, is_teacher, store
from autoreg_ui.state import current_config, current_session

POLL_S = 1.0  # an open question or round is checked for news this often (one indexed read)
STOP_SENT = "class_stop_sent"  # (class, stop) this teacher tab last told the class
WIDE = "class_desk_wide"  # a popover holding a chart: as wide as the projector allows (DESK_CSS)
# a popover's body is drawn apart from the page, so it is found by the keyed container inside it; Streamlit
# sets its max-width inline from the room beside its button, hence !important (its placement then shifts it in)
DESK_CSS = (f"<style>[data-testid=stPopoverBody]:has([class*=st-key-{WIDE}]) {{ width: min(1100px, 94vw) !important; "
            "max-width: 94vw !important; }</style>")
DESK_TOKENS = 5  # tokens per student in a round started from the desk (the Class page sets its own)


def shown_question(question, steps: int):
    """The question the desk (and a student's page) shows for a text of ``steps`` steps: an open one while the
    text is still at its step, a revealed one while the text is at the step the reveal took; after the text
    moved on (a step, an undo, another prompt), none: its result belongs to a text no longer on screen."""
    if question is None:
        return None
    at = question.step if question.revealed is None else question.step + 1
    return question if steps == at else None


def round_temperature(config) -> float:
    """A round started from the desk: the teacher's temperature, or 1 when the teacher is greedy (every draw
    the same would show no tree)."""
    return float(config.temperature or 1.0)


def start_button(where, page_url_path: str) -> None:
    """Start a class from the path bar: the class is made and this tab stays on its stop."""
    if where.button(text.START_BUTTON, key=keys.CLASS_START + "_desk", help=text.START_HELP, type="tertiary"):
        create_class(switch=False)


def create_class(switch: bool) -> None:
    """A new class led by this tab; ``switch``: open the Class page (its code and QR), else stay on this page
    (the path bar's desk shows the code)."""
    try:
        code, key = store().create()
    except ClassError as exc:
        messages.say(str(exc), "error")
        return
    st.session_state.update({keys.CLASS_CODE: code, keys.CLASS_KEY: key, keys.CLASS_MODE: "following"})
    st.session_state.pop(keys.CLASS_SEAT, None)
    class_live.take_lead(st.session_state)
    if switch:
        st.switch_page(site_pages.file("class"), query_params={"class": code, "key": key})
    st.rerun()


def tell_stop(state, stop: dict | None) -> None:
    """The class learns the lesson stop its teacher is on (once per change: one write when the teacher moves)."""
    sent = (state[keys.CLASS_CODE], stop)
    if state.get(STOP_SENT) == sent:
        return
    try:
        store().set_stop(state[keys.CLASS_CODE], state[keys.CLASS_KEY], stop)
    except ClassError:
        return  # the class ended: the page says so where it draws the class
    state[STOP_SENT] = sent


def desk(where, page_url_path: str, stop: dict | None = None, start_where=None) -> None:
    """The teacher's row in ``where`` (the path bar's box); nothing for a student or on the Class page.
    ``stop``: the path's stop the teacher is on (None off a path), told to the class. ``start_where``: where
    Start a class goes before there is a class (default ``where``): the bar's button row keeps it on one line."""
    state = st.session_state
    if is_student(state):
        return
    if not is_teacher(state):
        if page_url_path != "class":
            start_button(start_where if start_where is not None else where, page_url_path)
        return
    tell_stop(state, stop)
    if page_url_path == "class":
        return
    drawn = store().pulse(state[keys.CLASS_CODE])  # read first: a change while the desk is drawn is not missed
    info = store().info(state[keys.CLASS_CODE])
    if info is None:
        return
    key, session = state[keys.CLASS_KEY], current_session()
    where.html(DESK_CSS)
    row = where.container(horizontal=True, vertical_alignment="center", gap="small", key="class_desk")
    students = [s for s in store().students(info.code) if not s.removed]
    with row.popover(text.DESK_CODE.format(code=info.code), help=text.DESK_CODE_HELP):
        teacher.join_block(info.code)
    if session is None:
        row.caption(text.DESK_NO_TEXT)
        return
    question = shown_question(store().question(info.code, info.open_question), len(session.records))
    if question is None or question.revealed is not None:
        if row.button(text.ASK_BUTTON, key=keys.CLASS_ASK + "_desk", help=text.ASK_HELP, type="primary"):
            ask(info, session, key)
    if question is not None and question.revealed is None:
        if row.button(text.REVEAL_BUTTON, key=keys.CLASS_REVEAL + "_desk", help=text.REVEAL_HELP, type="primary"):
            teacher.reveal(info, session, key, question)
        row.markdown(text.ANSWERS_IN.format(n=len(store().guesses(info.code, question.id)), seated=len(students)),
                     width="content")
    if question is not None and question.revealed is not None:
        guesses = store().guesses(info.code, question.id)
        with row.popover(text.DESK_GUESSES.format(n=len(guesses)), help=text.DESK_GUESSES_HELP), \
                st.container(key=WIDE + "_guesses"):
            teacher.show_reveal(info, question, guesses, students)
    sample(row, info, session, key, students)
    if info.open_question is not None or info.open_round is not None:
        with row:
            watch(info.code, drawn)


def ask(info, session, key: str) -> None:
    """Ask about the next token of the text on screen (an open question without a reveal is replaced)."""
    config = current_config()
    stop = session.stop_reason(config)
    if stop is not None:
        st.warning(text.STOPPED.format(why=stop[1]))
        return
    session.next_pipeline(config)  # the prefill, if the text has not had one: students score against it
    class_live.publish()
    teacher.act(lambda: store().ask(info.code, key, len(session.records)))


def watch(code: str, drawn) -> None:
    """While a question or a round is open: every POLL_S, when the class moved (a guess, a draw) since this page
    was drawn, the page is drawn again, so the counts, the guesses and the tree are the class's now."""
    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        if store().pulse(code) != drawn:
            st.rerun(scope="app")
    poll()


def sample(row, info, session, key: str, students) -> None:
    """Everyone sample at the teacher's settings; while a round is open on this text, its draws and its tree."""
    config = current_config()
    temperature = round_temperature(config)
    if row.button(text.SAMPLE_BUTTON, key=keys.CLASS_SAMPLE + "_desk", type="primary",
                  help=text.desk_sample_help(DESK_TOKENS, temperature, greedy=not config.temperature)):
        teacher.start_round(info, session, key, DESK_TOKENS, replace(config, temperature=temperature))
    rnd = store().round(info.code, info.open_round)
    if rnd is not None and tuple(rnd.context) == tuple(session.ids):
        following = sum(s.mode == "following" for s in students)
        row.markdown(text.DESK_DRAWS.format(n=len(store().draws(info.code, rnd.id)), following=following),
                     width="content")
        with row.popover(text.DESK_TREE, help=text.DESK_TREE_HELP), st.container(key=WIDE + "_tree"):
            teacher.show_round(info, [rnd], session.bundle, students)
