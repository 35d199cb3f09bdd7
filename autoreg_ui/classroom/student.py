"""A student's seat: the join form, the teacher's text as it grows, a guess, a draw, and exploring alone.

A following student's tab computes nothing the teacher did not: it draws the teacher's own step records
(``class_live.class_snapshot``). The only model work a student's tab does is its own: scoring its guess
against the logits the teacher published, and its draw when the whole class samples.
"""
from __future__ import annotations

import hashlib

import streamlit as st

from autoreg_core.continuations import draw_one
from autoreg_core.guess import GuessError, score_guess
from autoreg_core.replay import ReplayError, config_from_dict, config_to_dict, recipe_from_dict, replay
from autoreg_core.session import SessionError, SessionSnapshot
from autoreg_core.tokens import sequence_text
from autoreg_ui import keys, limits, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import text
from autoreg_ui.classroom.store import GUESS_MAX, NICKNAME_MAX, ClassError, ClassInfo, normal_code
from autoreg_ui.state import current_bundle
from autoreg_ui.step_figures import token_strip_html, top_of_record, topn_figure

TOP_N = 10  # bars in the teacher's last step, as the student sees it


def join_form(code: str) -> None:
    with st.form("class_join_form"):
        typed = st.text_input(text.CODE_BOX, value=code, max_chars=16, key=keys.CLASS_CODE_BOX)
        nick = st.text_input(text.NICK_BOX, max_chars=NICKNAME_MAX, key=keys.CLASS_NICK)
        if not st.form_submit_button(text.JOIN_BUTTON, key=keys.CLASS_JOIN):
            if not code:
                st.info(text.NO_CLASS)
            return
    try:
        seat = class_live.store().join(typed, nick, source=class_live.source())
    except ClassError as exc:
        st.error(str(exc))
        return
    joined = normal_code(typed)
    class_live.leave(st.session_state, st.query_params)
    st.session_state.update({keys.CLASS_CODE: joined, keys.CLASS_SEAT: seat, keys.CLASS_MODE: "following"})
    st.query_params.update({"class": joined, "seat": seat})
    st.rerun()


def view(info: ClassInfo, on_class_page: bool) -> None:
    """The seat, on the Class page or (a follower) in place of the step page."""
    state, code, seat = st.session_state, info.code, st.session_state[keys.CLASS_SEAT]
    store = class_live.store()
    me = store.student(code, seat)
    if me is None or me.removed:
        st.warning(text.REMOVED_YOU)
        class_live.leave(state, st.query_params)
        return
    mode = state.get(keys.CLASS_MODE, "following")
    if on_class_page:
        st.header(text.STUDENT_HEADER.format(code=code))
        as_name = text.AS_NAME.format(name=messages.plain(me.nickname)) if me.nickname else ""
        st.markdown(text.YOU_ARE.format(code=code, as_name=as_name))
    else:
        st.info(text.FOLLOWING_HERE.format(code=code))
    snapshot = class_live.class_snapshot(code, info)
    seat_buttons(info, mode, snapshot is not None, on_class_page)
    if snapshot is None:
        st.info(text.WAITING)
        return
    config = recipe_from_dict(info.recipe).config_at(max(1, len(snapshot.records)))
    st.caption(text.SETTINGS_LINE.format(settings=text.settings_text(config_to_dict(config))))  # numbers only
    st.markdown(token_strip_html(snapshot.views(), list(snapshot.records), snapshot.prompt_len),
                unsafe_allow_html=True)
    question = store.question(code, info.open_question)
    if question is not None:
        guess_box(info, question, snapshot, seat)
    if info.open_round is not None and mode == "following":
        my_draw(info, seat)
    if snapshot.records:
        last = snapshot.records[-1]
        show_chart(topn_figure(snapshot.bundle.tokenizer, top_of_record(last, TOP_N),
                               text.LAST_STEP_CHART.format(n=last.index)),
                   "class_last_step", f"class-step-{last.index}")


def seat_buttons(info: ClassInfo, mode: str, has_text: bool, on_class_page: bool) -> None:
    state = st.session_state
    row = st.columns(3)
    if mode == "following":
        if on_class_page:
            st.caption(text.FOLLOWING)
        if has_text and row[0].button(text.EXPLORE_BUTTON, key=keys.CLASS_EXPLORE, help=text.EXPLORE_HELP):
            explore(info)
    else:
        st.caption(text.EXPLORING)
        follow_again_button(info, row[0])
    if row[2].button(text.LEAVE_BUTTON, key=keys.CLASS_LEAVE):
        class_live.leave(state, st.query_params)
        st.rerun()


def follow_again_button(info: ClassInfo, where) -> None:
    state = st.session_state
    if where.button(text.FOLLOW_BUTTON, key=keys.CLASS_FOLLOW):
        state[keys.CLASS_MODE] = "following"
        class_live.store().seen(info.code, state[keys.CLASS_SEAT], "following", "class")
        st.rerun()


def explore_bar(info: ClassInfo) -> None:
    """Above an exploring student's own step page: where the class is, and the way back to it."""
    note, button = st.columns([4, 1], vertical_alignment="center")
    note.caption(text.EXPLORING_HERE.format(code=info.code))
    follow_again_button(info, button)


def guess_box(info: ClassInfo, question, snapshot: SessionSnapshot, seat: str) -> None:
    store = class_live.store()
    mine = [g for g in store.guesses(info.code, question.id) if g.student == seat]
    if question.revealed is not None:
        model = question.model
        st.markdown(messages.plain(text.model_chose(model["choice_label"], model["prob"], model["rank"])))
        if mine:
            g = mine[0]
            label = model.get("tokens", {}).get(str(g.token), [str(g.token)])[0]
            st.success(text.your_score(messages.plain(g.text), messages.plain(label), g.prob, g.rank, g.score,
                                       g.tokens))
        scores = store.scores(info.code)
        if seat in scores:
            st.caption(text.total_score(scores[seat], store.answered(info.code, seat)))
        return
    with st.form("class_guess_form", clear_on_submit=False):
        guess = st.text_input(text.GUESS_BOX, max_chars=GUESS_MAX, help=text.GUESS_HELP, key=keys.CLASS_GUESS)
        sent = st.form_submit_button(text.GUESS_SEND, key=keys.CLASS_GUESS_SEND, type="primary")
    if mine:
        st.caption(text.GUESS_KEPT.format(text=messages.plain(mine[0].text)))
    if not sent:
        return
    if len(snapshot.records) != question.step or snapshot.pending_logits is None:
        st.warning(text.STOPPED.format(why=text.MOVED))
        return
    try:
        scored = score_guess(snapshot.bundle.tokenizer, snapshot.pending_logits.float().softmax(-1), guess)
        store.guess(info.code, seat, question.id, scored.text, scored.token, scored.tokens, scored.prob, scored.rank,
                    scored.score)
    except (GuessError, ClassError) as exc:
        st.error(str(exc))
        return
    st.rerun()


def draw_seed(seat: str, rid: int) -> int:
    """This student's own seed for a round: different for every student and round, the same on a rebuild."""
    return int.from_bytes(hashlib.sha256(f"{seat}:{rid}".encode()).digest()[:4], "big")


def my_draw(info: ClassInfo, seat: str) -> None:
    """This tab's continuation for the open round: drawn once (its decode passes shared with the class's)."""
    store = class_live.store()
    rnd = store.round(info.code, info.open_round)
    if rnd is None:
        return
    mine = [d for d in store.draws(info.code, rnd.id) if d.student == seat]
    bundle = current_bundle()
    if not mine and bundle is not None:
        seed = draw_seed(seat, rnd.id)
        try:
            prefix = class_live.round_prefix(rnd)
            tokens = draw_one(bundle, prefix, config_from_dict(rnd.config), rnd.tokens, seed)
            store.add_draw(info.code, seat, rnd.id, tokens, seed)
        except (ClassError, ReplayError, ValueError) as exc:
            st.warning(text.DRAW_FAILED.format(why=exc))
            return
        mine = [d for d in store.draws(info.code, rnd.id) if d.student == seat]
    if mine and bundle is not None:
        st.markdown(messages.plain(text.YOUR_DRAW.format(seed=mine[0].seed,
                                                         text=sequence_text(bundle.tokenizer, list(mine[0].tokens)))))


def explore(info: ClassInfo) -> None:
    """The student's own session, rebuilt from the teacher's recipe (the exact same tokens), on the step page."""
    bundle = current_bundle()
    if bundle is None:
        return
    try:
        session = replay(bundle, recipe_from_dict(info.recipe))
    except (ReplayError, SessionError, ValueError) as exc:
        st.error(str(exc))
        return
    state = st.session_state
    state[keys.SESSION] = session
    limits.hold(session)  # as every tab's session: an idle one gives its memory back
    state[keys.CLASS_MODE] = "exploring"
    class_live.store().seen(info.code, state[keys.CLASS_SEAT], "exploring", "step")
    st.switch_page("pages/1_step.py", query_params={"class": info.code, "seat": state[keys.CLASS_SEAT]})
