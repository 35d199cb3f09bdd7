"""A student's seat: the join form, the teacher's text as it grows, a guess, a draw, and exploring alone.

A following student's tab computes nothing the teacher did not: it draws the teacher's own step records
(``class_live.class_snapshot``). The only model work a student's tab does is its own: scoring its guess
against the logits the teacher published, and its draw when the whole class samples.
"""
from __future__ import annotations

import hashlib

import streamlit as st

from autoreg_core.engine.replay import ReplayError, config_from_dict, recipe_from_dict, replay
from autoreg_core.engine.session import SessionError, SessionSnapshot
from autoreg_core.engine.tokens import token_views
from autoreg_core.experiments.continuations import draw_one
from autoreg_core.experiments.guess_score import GuessError, score_guess
from autoreg_server import settings
from autoreg_server.class_store import GUESS_MAX, NICKNAME_MAX, ClassError, ClassInfo, normal_code
from autoreg_ui import keys, limits, messages, site_pages
from autoreg_ui.classroom import feed_view, text
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom.confirm import Confirmed, confirmed
from autoreg_ui.classroom.desk import shown_question
from autoreg_ui.classroom.figures import token_chips_html
from autoreg_ui.classroom.hall import STEP, STRIP, hall
from autoreg_ui.sharing import presenter
from autoreg_ui.state import current_bundle, session_runtime

CODE_MAX = 16  # characters of a typed class code (normal_code keeps at most this many letters and digits)
TYPED_MAX = 20_000  # what a box takes before the app checks it: a long paste arrives and is refused with the limit
LEAVING = "class_leaving"  # a student pressed Leave the class: confirm it


def join_form(code: str) -> None:
    with st.form("class_join_form"):
        typed = st.text_input(text.CODE_BOX, value=code, max_chars=TYPED_MAX, key=keys.CLASS_CODE_BOX)
        nick = st.text_input(text.NICK_BOX, max_chars=TYPED_MAX, key=keys.CLASS_NICK)
        if not st.form_submit_button(text.JOIN_BUTTON, key=keys.CLASS_JOIN, type="primary"):
            if not code:
                st.info(text.NO_CLASS)
            return
    too_long = too_long_message(typed, CODE_MAX, text.CODE_TOO_LONG) or too_long_message(nick, NICKNAME_MAX,
                                                                                          text.NICK_TOO_LONG)
    if too_long:
        st.error(too_long)
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


def too_long_message(typed: str, limit: int, message: str) -> str | None:
    """The message for a box holding more than ``limit`` characters (a paste), saying the limit."""
    n = len(str(typed or "").strip())
    return message.format(limit=limit, n=f"{n:,}") if n > limit else None


def view(info: ClassInfo, on_class_page: bool) -> None:
    """The seat, on the Class page or (a follower) in place of the step page."""
    state, code, seat = st.session_state, info.code, st.session_state[keys.CLASS_SEAT]
    store = class_live.store()
    me = store.student(code, seat)
    if me is None or me.removed:
        messages.say(text.REMOVED_YOU, "warning", state)
        class_live.leave(state, st.query_params)
        st.rerun()  # drawn again as a tab in no class: its sidebar holds the learner's own settings again
    mode = state.get(keys.CLASS_MODE, "following")
    following = mode == "following"
    # Everything above the strip that comes and goes (a stop's line, a rebuilt-text note) is drawn inside one
    # block, so the strip keeps its place in the page: a redraw then replaces it, where a strip that moved would
    # show next to the previous one until the run ends (seconds on a busy server).
    with st.container():
        if on_class_page:  # phone-first: who and where in two short lines, then the text, the guess and the score
            st.title(text.STUDENT_HEADER.format(code=code))
            as_name = text.AS_NAME.format(name=messages.plain(me.nickname)) if me.nickname else ""
            st.caption(text.YOU_ARE.format(code=code, as_name=as_name) + " "
                       + (text.FOLLOWING if following else text.EXPLORING))
        else:
            st.info(text.FOLLOWING_HERE.format(code=code))
        stop_line(info, following)
        snapshot = class_live.class_snapshot(code, info)
    # the teacher's text, drawn in the page from the class's feed: it follows the teacher without a rerun
    question = store.question(code, info.open_question)
    doc = feed_view.document(info, snapshot, question, store.stop(code), store.round(code, info.open_round))
    large = presenter.active()
    if snapshot is None:
        st.info(text.WAITING)
        hall(STRIP, doc, seat, large)  # says when the teacher's first text arrives (the page runs again)
        seat_buttons(info, mode, False)
        return
    hall(STRIP, doc, seat, large)
    # a question's box or result only while the text is the one it was about: after the teacher moved on, none
    question = shown_question(question, len(snapshot.records))
    if question is not None:
        guess_box(info, question, snapshot, seat)
    if info.open_round is not None and following:
        my_draw(info, seat, snapshot)
    seat_buttons(info, mode, True)
    hall(STEP, doc, seat, large)
    leave_block()


def stop_line(info: ClassInfo, following: bool) -> None:
    """Where the lesson is (the teacher's stop on the lesson path) and, away from the step page, a way to try
    that stop's page on one's own: the class goes on, and Follow again comes back to it."""
    stop = class_live.store().stop(info.code)
    if stop is None:
        return
    note, button = st.columns([3, 2], vertical_alignment="center")
    note.caption(text.CLASS_AT_STOP.format(number=stop["number"], total=stop["total"],
                                           title=messages.plain(stop["title"])))
    if following and stop["page"] != "step" and button.button(text.EXPLORE_STOP, key="class_explore_stop",
                                                              help=text.EXPLORE_STOP_HELP):
        explore_stop(info, stop)


def explore_stop(info: ClassInfo, stop: dict) -> None:
    """Open the stop's page on this tab's own, set up as the stop's link sets it (as the teacher's path does)."""
    from autoreg_ui import lesson_path

    state = st.session_state
    params = {name: [value] for name, value in stop["params"]}
    widgets, rest = lesson_path.sidebar_values(params)
    state.update(widgets)
    state[keys.CLASS_MODE] = "exploring"
    class_live.store().seen(info.code, state[keys.CLASS_SEAT], "exploring", stop["page"])
    st.switch_page(site_pages.file(stop["page"]),
                   query_params={**rest, "class": info.code, "seat": state[keys.CLASS_SEAT]})


def seat_buttons(info: ClassInfo, mode: str, has_text: bool) -> None:
    """Explore on my own (or Follow again): one button; leaving sits apart, at the end (``leave_block``)."""
    if mode == "following":
        if has_text and st.button(text.EXPLORE_BUTTON, key=keys.CLASS_EXPLORE, help=text.EXPLORE_HELP):
            explore(info)
    else:
        follow_again_button(info, st)


def leave_block() -> None:
    """Leaving the class, apart from everything else and confirmed: a mis-tap does not drop a student out."""
    st.divider()
    if confirmed(Confirmed(LEAVING, text.LEAVE_BUTTON, keys.CLASS_LEAVE, text.LEAVE_CONFIRM, text.LEAVE_SURE,
                           "class_leave_sure", text.LEAVE_STAY, "class_leave_stay", ask_type="tertiary")):
        class_live.leave(st.session_state, st.query_params)
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
        guess = st.text_input(text.GUESS_BOX, max_chars=TYPED_MAX, help=text.GUESS_HELP, key=keys.CLASS_GUESS)
        sent = st.form_submit_button(text.GUESS_SEND, key=keys.CLASS_GUESS_SEND, type="primary")
    if mine:
        st.caption(text.GUESS_KEPT.format(text=messages.plain(mine[0].text)))
    if not sent:
        return
    too_long = too_long_message(guess, GUESS_MAX, text.GUESS_TOO_LONG)
    if too_long:
        st.error(too_long)
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


def moved_on_note(round_stop: dict | None, stop: dict | None) -> bool:
    """Whether to say the teacher's text moved on since the open round began: only while the class is at the lesson
    stop where the round started (``Round.stop``, kept by the store). The round stays open until the teacher starts
    or closes another, but at another stop the class is at other work and the note would read as news, to a
    student who joins or reloads there as much as to one who saw the round."""
    return stop == round_stop


def my_draw(info: ClassInfo, seat: str, snapshot: SessionSnapshot) -> None:
    """This tab's continuation for the open round: drawn once (its decode passes shared with the class's), and
    shown only while the teacher's text is still the round's: after the text moves on, a draw (or a late
    joiner's first one) would read as continuing the new text."""
    store = class_live.store()
    rnd = store.round(info.code, info.open_round)
    if rnd is None:
        return
    if tuple(rnd.context) != tuple(snapshot.ids):
        if moved_on_note(rnd.stop, store.stop(info.code)):
            st.caption(text.ROUND_MOVED_ON)
        return
    def seat_draws() -> list:
        return [d for d in store.draws(info.code, rnd.id) if d.student == seat]

    mine = seat_draws()
    bundle = current_bundle()
    if not mine and bundle is not None:
        seed, refused = draw_seed(seat, rnd.id), None
        try:
            prefix = class_live.round_prefix(rnd)
            tokens = draw_one(bundle, prefix, config_from_dict(rnd.config), rnd.tokens, seed,
                              batched=settings.current().batch)
            store.add_draw(info.code, seat, rnd.id, tokens, seed)
        except (ClassError, ReplayError, ValueError) as exc:
            refused = exc
        # read again either way: after a refusal, the same seat open twice (a phone and a laptop, a reloaded tab)
        # may have drawn first, and that draw is this seat's, so it is shown; any other refusal is said
        mine = seat_draws()
        if not mine and refused is not None:
            st.warning(text.DRAW_FAILED.format(why=refused))
            return
    if mine and bundle is not None:
        st.markdown(messages.plain(text.YOUR_DRAW.format(seed=mine[0].seed)))
        labels = [v.label for v in token_views(bundle.tokenizer, list(mine[0].tokens))]
        st.markdown(token_chips_html(labels), unsafe_allow_html=True)  # every label escaped there
        st.caption(text.ROUND_SETTINGS.format(settings=text.settings_text(rnd.config, rnd.tokens)))


def explore(info: ClassInfo) -> None:
    """The student's own session, rebuilt from the teacher's recipe (the exact same tokens), on the step page."""
    bundle = current_bundle()
    if bundle is None:
        return
    try:
        session = replay(bundle, recipe_from_dict(info.recipe), **session_runtime(bundle))
    except (ReplayError, SessionError, ValueError) as exc:
        st.error(str(exc))
        return
    state = st.session_state
    state[keys.SESSION] = session
    limits.hold(session)  # as every tab's session: an idle one gives its memory back
    # the prompt box holds the class's prompt (not this student's old one), so the step page offers no
    # "Start from this prompt" that would throw the text away
    state[keys.PROMPT_KEPT] = state[keys.PROMPT_BOX] = session.prompt
    state[keys.CHAT_KEPT] = state[keys.CHAT_BOX] = session.chat
    state[keys.CLASS_MODE] = "exploring"
    class_live.store().seen(info.code, state[keys.CLASS_SEAT], "exploring", "step")
    st.switch_page(site_pages.file("step"), query_params={"class": info.code, "seat": state[keys.CLASS_SEAT]})
