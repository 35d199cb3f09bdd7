"""The teacher's desk on the Class page: the join code, who is where, a question round, everyone sampling.

Every action here goes through the class store with this tab's teacher key; a refused one (a class that
ended, a limit reached) says why on the page. The projector shows aggregates only: counts, the histogram
of guesses against the model's distribution, and the tree of the class's draws.
"""
from __future__ import annotations

import html
from collections import OrderedDict
from dataclasses import replace

import pandas as pd
import streamlit as st

from autoreg_core.engine.decode import copy_cache
from autoreg_core.engine.prefix import Prefix
from autoreg_core.engine.replay import config_from_dict, config_to_dict
from autoreg_core.engine.session import SessionError
from autoreg_core.engine.tokens import single_token_view
from autoreg_core.experiments import continuation_tree as prefix_tree
from autoreg_server.class_store import MAX_DRAW_TOKENS, ClassError, ClassInfo, Student
from autoreg_ui import charts, guide, keys, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import text
from autoreg_ui.classroom.confirm import Confirmed, confirmed
from autoreg_ui.classroom.figures import reveal_bars, reveal_figure, tree_figure
from autoreg_ui.classroom.record import class_record, nicknames, record_csv, record_json, record_name, with_record
from autoreg_ui.sharing import export
from autoreg_ui.state import current_config, current_session
from autoreg_ui.step_figures import token_strip_html

TOP_SHOWN = 6  # model tokens shown beside the guesses at a reveal
ASK_AGAIN = "class_ask_again_for"  # the open question whose answers a second Ask would drop (to confirm)
SHOW_TYPED = "class_show_typed"  # the teacher's toggle: what students typed goes on the page (off by default)
ENDING = "class_ending"  # the teacher pressed End the class: confirm it


def view(info: ClassInfo) -> None:
    """The desk: once students have joined it leads with the question (the code and QR folded one click away);
    before, the code and QR come first so the class can join."""
    key = st.session_state[keys.CLASS_KEY]
    st.header(text.TEACHER_HEADER)
    st.caption(text.lead_line(class_live.leads(st.session_state)))
    students = [s for s in class_live.store().students(info.code) if not s.removed]
    session = current_session()
    with st.container():  # the part that changes with each question, in one block: the text below keeps its place
        if students:  # the class is here: the question first, the code one click away
            if session is not None:
                question_panel(info, session, key, students)
            with st.expander(text.JOIN_FOLDED.format(code=info.code)):
                join_block(info.code)
        else:
            join_block(info.code)
        seats(students)
        if session is None:
            st.info(text.NO_TEXT_YET)
        elif not students:
            question_panel(info, session, key, students)
    options = st.columns(3)
    names = options[0].toggle(text.NAMES_TOGGLE, value=info.names_on, key=keys.CLASS_NAMES)
    board = options[1].toggle(text.BOARD_TOGGLE, value=info.leaderboard, key=keys.CLASS_BOARD)
    options[2].toggle(text.TYPED_TOGGLE, key=SHOW_TYPED, help=text.TYPED_HELP)
    if (names, board) != (info.names_on, info.leaderboard):
        act(lambda: class_live.store().set_options(info.code, key, names_on=names, leaderboard=board))
    if session is not None:
        st.caption(text.TEACHER_TEXT)
        st.markdown(token_strip_html(session.views(), session.records, session.prompt_len), unsafe_allow_html=True)
        st.caption(text.TEACHER_SETTINGS.format(settings=text.settings_text(config_to_dict(current_config()))))
        sample_panel(info, session, key, students)
    manage(info, key, students, session)


def join_block(code: str) -> None:
    """The code, the join link and its QR code, large enough to project."""
    join_url = f"{class_live.base_url()}/?class={code}"
    left, right = st.columns([2, 1])
    left.markdown(f"<div style='font-size:3.2rem;font-weight:700;letter-spacing:.3rem'>{code}</div>",
                  unsafe_allow_html=True)  # the code is [A-Z0-9] only (normal_code)
    left.markdown(f"{text.JOIN_WITH} `{join_url}`")
    right.markdown(qr_img(join_url), unsafe_allow_html=True)  # an <img> we build: a data URI and a fixed alt
    right.caption(text.QR_ALT)
    st.caption(text.KEY_WARNING)


def qr_img(url: str) -> str:
    """The join link as a QR code: black on white on any theme, an image with a name for screen readers."""
    import segno

    uri = segno.make(url, error="m").svg_data_uri(scale=5, dark="#000000", light="#ffffff")
    return f'<img src="{html.escape(uri)}" alt="{html.escape(text.QR_ALT)}" width="220" height="220">'


def seats(students: list[Student]) -> None:
    """Counts only: joined, following, exploring, and on which page (never what anyone typed)."""
    following = sum(s.mode == "following" for s in students)
    st.markdown(text.SEATS.format(joined=len(students), following=following, exploring=len(students) - following))
    if not students:
        st.caption(text.NO_STUDENTS)
        return
    frame = pd.crosstab(pd.Series([s.page or "class" for s in students], name=text.WHERE_COLUMNS[0]),
                        pd.Series([s.mode for s in students], name="mode"))
    frame = frame.reindex(columns=["following", "exploring"], fill_value=0).reset_index()
    frame.columns = text.WHERE_COLUMNS
    with st.expander(text.WHERE_HEADER):
        st.dataframe(frame, hide_index=True)


def act(action, done: str | None = None) -> bool:
    """A teacher action on the store; a refusal is shown, a success redraws the page."""
    try:
        action()
    except ClassError as exc:
        st.error(str(exc))
        return False
    if done:
        messages.say(done, "info")
    st.rerun()
    return True


# ---------------------------------------------------------------- predict the next token
def question_panel(info: ClassInfo, session, key: str, students: list[Student]) -> None:
    st.subheader(text.QUESTION_HEADER)
    guide.show(text.GUIDES, text.QUESTION_HEADER)
    store, config = class_live.store(), current_config()
    question = store.question(info.code, info.open_question)
    buttons = st.columns(3)
    guesses = [] if question is None else store.guesses(info.code, question.id)
    open_answers = len(guesses) if question is not None and question.revealed is None else 0
    asked = buttons[0].button(text.ASK_BUTTON, key=keys.CLASS_ASK, help=text.ASK_HELP, type="primary")
    if asked and open_answers:
        st.session_state[ASK_AGAIN] = question.id  # answers are in: asking again would drop them, so confirm
        asked = False
    if open_answers and st.session_state.get(ASK_AGAIN) == question.id:
        st.warning(text.ASK_AGAIN_WARNING.format(n=open_answers))
        again, keep = st.columns(2)
        asked = again.button(text.ASK_AGAIN_BUTTON, key="class_ask_again")
        if keep.button(text.ASK_KEEP_BUTTON, key="class_ask_keep"):
            st.session_state.pop(ASK_AGAIN, None)
            st.rerun()
    if asked:
        st.session_state.pop(ASK_AGAIN, None)
        stop = session.stop_reason(config)
        if stop is not None:
            st.warning(text.STOPPED.format(why=stop[1]))
        else:
            session.next_pipeline(config)  # the prefill, if the text has not had one: students score against it
            class_live.publish()
            act(lambda: store.ask(info.code, key, len(session.records)))
    if question is None:
        return
    if question.revealed is None:
        st.markdown(text.ANSWERS_IN.format(n=len(guesses), seated=len(students)))
        if buttons[1].button(text.REVEAL_BUTTON, key=keys.CLASS_REVEAL, help=text.REVEAL_HELP):
            reveal(info, session, key, question)
    else:
        show_reveal(info, question, guesses, students)
    if buttons[2].button(text.MOVE_ON_BUTTON, key=keys.CLASS_MOVE_ON):
        act(lambda: store.close_question(info.code, key))


def reveal(info: ClassInfo, session, key: str, question) -> None:
    """Close the guesses with the model's distribution for that step, then take the step."""
    bundle, config = session.bundle, current_config()
    if len(session.records) != question.step:
        st.warning(text.STOPPED.format(why=text.MOVED))
        return
    probs = session.next_pipeline(config).raw_probs
    guesses = class_live.store().guesses(info.code, question.id)  # read again: the last guess may be seconds old
    top = probs.topk(TOP_SHOWN).indices.tolist()
    tokens = sorted({g.token for g in guesses} | set(top))
    try:
        record = session.step(config)
    except SessionError as exc:
        st.error(str(exc))
        return
    model = {"choice": record.token_id, "choice_label": label(bundle, record.token_id), "prob": record.prob,
             "rank": record.rank, "top": top,
             "tokens": {str(t): [label(bundle, t), float(probs[t])] for t in tokens}}
    class_live.publish()
    act(lambda: class_live.store().reveal(info.code, key, question.id, model))


def guess_counts(guesses, name) -> list[list]:
    """The guesses as the wall sees them by default: one row per scored token (never what was typed), most
    guessed first: the token, how many guessed it, its probability, rank and the points each of them scored."""
    rows: dict[int, list] = {}
    for g in guesses:
        row = rows.setdefault(g.token, [name(g.token), 0, round(g.prob, 6), g.rank, round(g.score, 1)])
        row[1] += 1
    return sorted(rows.values(), key=lambda r: (-r[1], r[3]))


def label(bundle, token: int) -> str:
    return single_token_view(bundle.tokenizer, token).label


def show_reveal(info: ClassInfo, question, guesses, students: list[Student]) -> None:
    model = question.model
    tokens = {int(t): v for t, v in model.get("tokens", {}).items()}
    bars = reveal_bars([g.token for g in guesses], model.get("top", []), lambda t: tokens[t][1],
                       lambda t: tokens[t][0])
    show_chart(reveal_figure(bars, text.REVEAL_CHART, text.CLASS_SHARE, text.MODEL_PROB), "class_reveal_chart",
               f"class-guesses-{question.id}")
    st.markdown(messages.plain(text.model_chose(model["choice_label"], model["prob"], model["rank"])))
    if not guesses:
        st.caption(text.NO_GUESSES)
        return
    counts = pd.Series([g.token for g in guesses]).value_counts()
    top = [int(t) for t, c in counts.items() if c == counts.iloc[0]]
    if len(top) == 1:
        st.markdown(messages.plain(text.class_best(tokens[top[0]][0], int(counts.iloc[0]), len(guesses),
                                                   tokens[top[0]][1])))
    else:  # a tie: no guess was the class's most common
        st.markdown(messages.plain(text.class_tie([tokens[t][0] for t in top], int(counts.iloc[0]), len(guesses))))
    st.dataframe(pd.DataFrame(guess_counts(guesses, lambda t: tokens[t][0]), columns=text.COUNT_COLUMNS),
                 hide_index=True)
    nick = nicknames(students, info.names_on)
    if st.session_state.get(SHOW_TYPED):  # what students typed: only when the teacher turns it on
        rows = [[nick.get(g.student, "—"), g.text,
                 tokens[g.token][0] + (f" {text.several_tokens(g.tokens)}" if g.tokens > 1 else ""),
                 round(g.prob, 6), g.rank, g.score] for g in guesses]
        st.dataframe(pd.DataFrame(rows, columns=text.GUESS_COLUMNS), hide_index=True)
    st.caption(text.SCORE_RULE)
    if info.leaderboard:
        scores = class_live.store().scores(info.code)
        board = sorted(((nick.get(s, "—"), v) for s, v in scores.items()), key=lambda r: -r[1])
        st.dataframe(pd.DataFrame(board, columns=text.BOARD_COLUMNS), hide_index=True)


# ---------------------------------------------------------------- everyone samples
def sample_panel(info: ClassInfo, session, key: str, students: list[Student]) -> None:
    st.subheader(text.SAMPLE_HEADER)
    guide.show(text.GUIDES, text.SAMPLE_HEADER)
    st.caption(text.SAMPLE_INTRO)
    config = current_config()
    row = st.columns([1, 2, 1, 1], vertical_alignment="bottom")
    n = row[0].number_input(text.SAMPLE_TOKENS, 1, MAX_DRAW_TOKENS, 5, key=keys.CLASS_SAMPLE_TOKENS)
    temperature = row[1].slider(text.SAMPLE_TEMPERATURE, 0.0, 2.0, float(config.temperature or 1.0), 0.05,
                                key=keys.CLASS_SAMPLE_TEMPERATURE)
    if row[2].button(text.SAMPLE_BUTTON, key=keys.CLASS_SAMPLE, help=text.SAMPLE_HELP, type="primary"):
        start_round(info, session, key, int(n), replace(config, temperature=float(temperature)))
    if info.open_round is not None and row[3].button(text.SAMPLE_CLOSE, key=keys.CLASS_SAMPLE_CLOSE):
        act(lambda: class_live.store().close_round(info.code, key))
    rounds = class_live.store().rounds(info.code)
    if rounds:
        show_round(info, rounds, session.bundle, students)


def start_round(info: ClassInfo, session, key: str, n: int, config) -> None:
    """The round's text is the teacher's whole text now; its KV cache is copied for the students' draws."""
    session.prefill()
    with session.lock:
        prefix = Prefix(tuple(session.ids), copy_cache(session.cache, session.bundle), session.pending_logits)
    try:
        rid = class_live.store().start_round(info.code, key, len(prefix.ids) - session.prompt_len, n,
                                             config_to_dict(config), list(prefix.ids))
    except ClassError as exc:
        st.error(str(exc))
        return
    class_live.keep_prefix(rid, prefix)
    st.session_state[keys.CLASS_SAMPLE_SHOWN] = rid
    st.rerun()


def show_round(info: ClassInfo, rounds, bundle, students: list[Student]) -> None:
    store = class_live.store()
    by_id = {r.id: r for r in rounds}
    if st.session_state.get(keys.CLASS_SAMPLE_SHOWN) not in by_id:
        st.session_state[keys.CLASS_SAMPLE_SHOWN] = rounds[-1].id
    shown = st.session_state[keys.CLASS_SAMPLE_SHOWN]
    drawn = {r.id: store.draws(info.code, r.id) for r in rounds}
    following = sum(s.mode == "following" for s in students)
    rnd, draws = by_id[shown], drawn[shown]
    if info.open_round == rnd.id:
        st.markdown(text.SAMPLE_DRAWN.format(n=len(draws), following=following))
    if draws:
        branches = prefix_tree.merge([d.tokens for d in draws])
        temperature = float(config_from_dict(rnd.config).temperature)
        title = text.TREE_CHART.format(n=len(draws), tokens=rnd.tokens, temperature=temperature)
        show_chart(tree_figure(branches, len(draws), lambda t: label(bundle, t), title, text.TREE_ROOT),
                   "class_tree_chart", f"class-tree-{rnd.id}")
    else:
        st.caption(text.NO_DRAWS)
    if len(rounds) > 1:
        number = {r.id: i + 1 for i, r in enumerate(rounds)}  # the class's own numbering, not the store's ids
        st.selectbox(text.SHOW_ROUND, [r.id for r in rounds], key=keys.CLASS_SAMPLE_SHOWN,
                     format_func=lambda rid: str(number[rid]))
        st.markdown(f"**{text.ROUNDS_HEADER}**")
        st.dataframe(rounds_frame(rounds, drawn), hide_index=True)


def rounds_frame(rounds, drawn: dict) -> pd.DataFrame:
    """One row per round: how far the class's draws fanned out at each temperature."""
    rows = []
    for number, r in enumerate(rounds, start=1):
        draws = [d.tokens for d in drawn[r.id]]
        branches = prefix_tree.merge(draws)
        rows.append([number, r.step, float(config_from_dict(r.config).temperature), len(draws),
                     prefix_tree.distinct_at(branches, 1), round(prefix_tree.top_share(branches, len(draws)), 3),
                     len(set(draws))])
    return pd.DataFrame(rows, columns=text.ROUNDS_COLUMNS)


# ---------------------------------------------------------------- the class itself
def manage(info: ClassInfo, key: str, students: list[Student], session) -> None:
    """Remove a student; take the class record; end the class (confirmed: everything it held is deleted)."""
    store = class_live.store()
    who: dict[str, str] = {}
    for student, name in nicknames(students, info.names_on).items():
        who[name if name not in who else f"{name} ({len(who) + 1})"] = student  # two students of one nickname
    if who:
        row = st.columns([3, 1], vertical_alignment="bottom")
        pick = row[0].selectbox(text.REMOVE_WHO, list(who), key=keys.CLASS_REMOVE_WHO)
        if row[1].button(text.REMOVE_BUTTON, key=keys.CLASS_REMOVE):
            act(lambda: store.remove(info.code, key, who[pick]), done=text.REMOVED)
    st.divider()
    record_buttons(info, session)
    if confirmed(Confirmed(ENDING, text.END_BUTTON, keys.CLASS_END, text.END_CONFIRM, text.END_SURE,
                           "class_end_sure", text.END_KEEP, "class_end_keep")):
        try:
            store.end(info.code, key)
        except ClassError as exc:
            st.error(str(exc))
            return
        class_live.forget(info.code)
        class_live.leave(st.session_state, st.query_params)
        messages.say(text.END_DONE, "info")
        st.rerun()


def record_now(info: ClassInfo, session) -> dict:
    """The class record as the store holds it now (made when a download is clicked)."""
    steps = list(session.records) if session is not None else []
    bundle = session.bundle if session is not None else None
    name = (lambda t: label(bundle, t)) if bundle is not None else str
    return class_record(class_live.store(), class_live.store().info(info.code) or info, steps, name,
                        model=bundle.name if bundle is not None else "",
                        prompt=session.prompt if session is not None else "")


def record_buttons(info: ClassInfo, session) -> None:
    """The class record: CSV, JSON, and the offline hand-out with the record as its last section."""
    row = st.columns(3)
    row[0].download_button(text.RECORD_CSV, data=lambda: record_csv(record_now(info, session)),
                           file_name=record_name(info.code, "csv"), mime="text/csv", key="class_record_csv",
                           on_click="ignore", help=text.RECORD_HELP)
    row[1].download_button(text.RECORD_JSON, data=lambda: record_json(record_now(info, session)),
                           file_name=record_name(info.code, "json"), mime="application/json",
                           key="class_record_json", on_click="ignore", help=text.RECORD_HELP)
    if session is not None:
        config, shown = current_config(), st.session_state.get(keys.HANDOUT_CHARTS) or OrderedDict()
        row[2].download_button(text.RECORD_HANDOUT, key="class_record_handout", on_click="ignore",
                               data=lambda: with_record(export.handout_html(session.snapshot(), config,
                                                                            charts.kept_charts(shown)),
                                                        record_now(info, session)),
                               file_name=record_name(info.code, "html"), mime="text/html", help=text.RECORD_HELP)
