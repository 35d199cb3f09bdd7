"""Class mode: a teacher's tab leads, students' tabs follow, guess the next token and sample together.

The class lives in SQLite (``class_store``): a restarted server finds it again. The teacher's steps are
kept there as a replay recipe; the live text every follower draws is the teacher's own session, read as
one snapshot (``Session.snapshot``) that the teacher's tab registers here when it publishes, so a
follower computes nothing the teacher did not. Only after a restart (no snapshot in this process yet)
does the first follower rebuild it from the recipe, once, for the whole class.

Who is who is in the tab's address: ``class=CODE`` for everyone, ``seat=ID`` for a student (an anonymous
id), ``key=KEY`` for the teacher. A tab is the teacher only if the store accepts its key. The views are
``class_teacher`` and ``class_student``; this module is what they share.
"""
from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

import streamlit as st

from autoreg_core import prefix as prefixes
from autoreg_core.replay import ReplayError, recipe_from_dict, recipe_of, recipe_to_dict, replay
from autoreg_core.session import SessionError, SessionSnapshot

from . import class_mode_text as text
from . import glossary, keys, messages
from .class_store import ClassError, ClassInfo, ClassStore, Round, class_hours, default_path, normal_code
from .state import current_bundle, current_config, current_session

PAGE = "pages/9_class.py"
POLL_S = 1.0  # a tab of a class checks the class's counters this often (one indexed SQLite read)
KEPT_PREFIXES = 8  # sampling rounds whose prefix (KV cache of the teacher's text) this process keeps

_live: dict[str, tuple[dict, SessionSnapshot]] = {}  # code → (recipe, the teacher's session at that recipe)
_prefixes: OrderedDict[int, prefixes.Prefix] = OrderedDict()  # round id → the text every draw starts from
_live_lock = threading.Lock()
_build_locks: dict[object, threading.Lock] = {}  # one rebuild at a time per class or round


@st.cache_resource
def store() -> ClassStore:
    """This server's classes (one SQLite file: ``AUTOREG_CLASS_DB``, default under the app's cache dir)."""
    return ClassStore(default_path(), hours=class_hours())


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
            store().claim_teacher(code, key, source=source())
            state[keys.CLASS_KEY] = key
        except ClassError as exc:
            state[keys.CLASS_KEY_REFUSED] = key
            messages.say(str(exc), "error", state)
    if query.get("seat") and keys.CLASS_SEAT not in state and keys.CLASS_KEY not in state:
        seat = store().student(code, query["seat"])
        if seat is not None and not seat.removed:
            state[keys.CLASS_SEAT] = seat.student


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


def leave(state, query, *names: str) -> None:
    """Forget this tab's class (and its role) in the state and the address."""
    for name in (keys.CLASS_CODE, keys.CLASS_KEY, keys.CLASS_SEAT, keys.CLASS_PUBLISHED, keys.CLASS_DRAWN, *names):
        state.pop(name, None)
    for name in ("class", "key", "seat"):
        if name in query:
            del query[name]


def is_teacher(state) -> bool:
    return bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_KEY))


def is_student(state) -> bool:
    return bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_SEAT))


def is_follower(state) -> bool:
    return is_student(state) and state.get(keys.CLASS_MODE, "following") == "following"


def wants_class_page(query) -> bool:
    """``/?class=CODE`` (the join link) opens the Class page."""
    return bool(normal_code(query.get("class", "")))


def source() -> str:
    """Who a wrong code or key counts against: the client's address when Streamlit knows it, else this tab
    (an id kept in its state). The store also counts every source together, so new tabs gain nothing."""
    address = getattr(st.context, "ip_address", None)
    if isinstance(address, str) and address:
        return address
    return st.session_state.setdefault(keys.CLASS_SOURCE, "tab-" + secrets.token_hex(8))


def base_url() -> str:
    """The app's address as the browser sees it (the join link starts with it)."""
    url = getattr(st.context, "url", None) or ""
    return url.split("?")[0].rstrip("/").rsplit("/", 1)[0] if url.count("/") > 2 else url.rstrip("/")


# ---------------------------------------------------------------- the teacher publishes
def publish(state=None) -> None:
    """The teacher's session, if it changed, written to the class (recipe) and kept here (snapshot).

    Called after every action on the session (``controls``) and at the end of every run of a teacher's tab,
    so followers see a step within one poll of it.
    """
    state = st.session_state if state is None else state
    if not is_teacher(state):
        return
    session = current_session()
    if session is None:
        return
    snapshot = session.snapshot()
    recipe = recipe_to_dict(recipe_of(snapshot, current_config()))
    # the same text is published again only when it gained its next-token logits (students score against them)
    published = (recipe, snapshot.pending_logits is not None)
    if state.get(keys.CLASS_PUBLISHED) == published:
        return
    code = state[keys.CLASS_CODE]
    with _live_lock:  # registered before the store moves, so no follower rebuilds what the teacher has
        _live[code] = (recipe, snapshot)
    try:
        store().set_recipe(code, state[keys.CLASS_KEY], recipe)
    except ClassError as exc:
        messages.say(str(exc), "error", state)
        return
    state[keys.CLASS_PUBLISHED] = published


def forget(code: str) -> None:
    """A class that ended: its live snapshot goes."""
    with _live_lock:
        _live.pop(code, None)


# ---------------------------------------------------------------- what the class shares in this process
def _once(name: object) -> threading.Lock:
    with _live_lock:
        return _build_locks.setdefault(name, threading.Lock())


def class_snapshot(code: str, info: ClassInfo) -> SessionSnapshot | None:
    """The teacher's text at the class's recipe: the teacher's own snapshot, or (after a restart) one replay."""
    if not info.recipe:
        return None
    with _live_lock:
        held = _live.get(code)
    if held is not None and held[0] == info.recipe:
        return held[1]
    bundle = current_bundle()
    if bundle is None:
        return None
    with _once(code):
        with _live_lock:
            held = _live.get(code)
        if held is not None and held[0] == info.recipe:
            return held[1]
        try:
            recipe = recipe_from_dict(info.recipe)
            session = replay(bundle, recipe)
            session.next_pipeline(recipe.config_at(max(1, len(session.records))))  # the logits guesses need
        except (ReplayError, SessionError, ValueError) as exc:
            st.error(str(exc))
            return None
        snapshot = session.snapshot()
        with _live_lock:
            _live[code] = (info.recipe, snapshot)
        st.info(text.REBUILT.format(steps=len(snapshot.records)))
        return snapshot


def keep_prefix(rid: int, prefix: prefixes.Prefix) -> None:
    """The text a sampling round draws from, with its KV cache (a copy: the teacher's session moves on)."""
    with _live_lock:
        _prefixes[rid] = prefix
        _prefixes.move_to_end(rid)
        while len(_prefixes) > KEPT_PREFIXES:
            _prefixes.popitem(last=False)


def round_prefix(rnd: Round) -> prefixes.Prefix | None:
    """The round's text ready to decode from: kept by the teacher's tab, or (after a restart) one prefill."""
    with _live_lock:
        held = _prefixes.get(rnd.id)
    if held is not None:
        return held
    bundle = current_bundle()
    if bundle is None:
        return None
    with _once(("round", rnd.id)):
        with _live_lock:
            held = _prefixes.get(rnd.id)
        if held is None:
            held = prefixes.prefill(bundle, rnd.context)
            keep_prefix(rnd.id, held)
        return held


# ---------------------------------------------------------------- every tab of a class
def watch(state, teacher: bool) -> None:
    """Every POLL_S: when the class moved since this page was drawn, redraw the whole page. Followers watch
    the teacher's changes; the teacher also watches what students send."""
    code = state.get(keys.CLASS_CODE)

    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        pulse = store().pulse(code)
        now = None if pulse is None else (pulse if teacher else pulse[0])
        if now != state.get(keys.CLASS_DRAWN):
            st.rerun(scope="app")
    poll()


def drawn(state, info: ClassInfo, teacher: bool) -> None:
    """What this page was drawn from (``watch`` redraws when the class moves past it)."""
    state[keys.CLASS_DRAWN] = (info.version, info.activity) if teacher else info.version


def heartbeat(page_name: str) -> None:
    """A student's tab says which page it is on (the teacher sees counts, never transcripts)."""
    state = st.session_state
    if is_student(state):
        try:
            store().seen(state[keys.CLASS_CODE], state[keys.CLASS_SEAT], state.get(keys.CLASS_MODE, "following"),
                         page_name or "step")
        except ClassError:
            pass


def start_class_button(where) -> None:
    """The sidebar's Start a class."""
    if where.button(text.START_BUTTON, key=keys.CLASS_START, help=text.START_HELP):
        try:
            code, key = store().create()
        except ClassError as exc:
            messages.say(str(exc), "error")
            return
        st.session_state.update({keys.CLASS_CODE: code, keys.CLASS_KEY: key, keys.CLASS_MODE: "following"})
        st.session_state.pop(keys.CLASS_SEAT, None)
        st.switch_page(PAGE, query_params={"class": code, "key": key})


def render() -> None:
    """The Class page: the teacher's desk, a student's seat, or the join form."""
    from . import class_student, class_teacher

    state = st.session_state
    st.title(text.TITLE)
    glossary.terms_here("class")
    st.markdown(text.INTRO)
    code = state.get(keys.CLASS_CODE)
    publish(state)  # before the counters are read: this page's own publishing must not look like news
    info = store().info(code) if code else None
    messages.show()
    if code and info is None:
        st.warning(text.CLASS_GONE)
    if info is None or not (is_teacher(state) or is_student(state)):
        class_student.join_form(code if info else "")
        return
    teacher = is_teacher(state)
    drawn(state, info, teacher)
    if teacher:
        class_teacher.view(info)
    else:
        class_student.view(info, on_class_page=True)
    watch(state, teacher)


def follow_here() -> bool:
    """On the step page: a following student sees the teacher's text instead of their own (True: drawn)."""
    state = st.session_state
    if not is_follower(state):
        return False
    info = store().info(state[keys.CLASS_CODE])
    if info is None:
        return False
    from . import class_student

    drawn(state, info, teacher=False)
    class_student.view(info, on_class_page=False)
    watch(state, teacher=False)
    return True
