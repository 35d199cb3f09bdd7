"""What the tabs of a class share in this server process: the class file, who a tab is, the teacher's live text.

The class lives in SQLite (``class_store``): a restarted server finds it again. The teacher's steps are kept
there as a replay recipe; the live text every follower draws is the teacher's own session, read as one
snapshot (``Session.snapshot``) that the teacher's tab registers here when it publishes, so a follower
computes nothing the teacher did not. Only after a restart (no snapshot in this process yet) does the first
follower rebuild it from the recipe, once, for the whole class. A sampling round's text (its KV cache) is
kept here the same way.

Who is who is in the tab's address: ``class=CODE`` for everyone, ``seat=ID`` for a student (an anonymous
id), ``key=KEY`` for the teacher; ``class_mode`` reads it into the tab's state. The views (``class_teacher``,
``class_student``) and ``class_mode`` build on this module; it imports none of them.
"""
from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

import streamlit as st

from autoreg_core import prefix as prefixes
from autoreg_core.replay import ReplayError, recipe_of, recipe_to_dict
from autoreg_core.session import SessionError, SessionSnapshot
from autoreg_ui import keys, messages
from autoreg_ui.classroom import replica_text, text
from autoreg_ui.classroom.store import ClassError, ClassInfo, ClassStore, Round, class_hours, default_path
from autoreg_ui.state import current_bundle, current_config, current_session

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
def is_teacher(state) -> bool:
    return bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_KEY))


def is_student(state) -> bool:
    return bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_SEAT))


def is_follower(state) -> bool:
    return is_student(state) and state.get(keys.CLASS_MODE, "following") == "following"


def leave(state, query, *names: str) -> None:
    """Forget this tab's class (and its role) in the state and the address."""
    for name in (keys.CLASS_CODE, keys.CLASS_KEY, keys.CLASS_SEAT, keys.CLASS_PUBLISHED, keys.CLASS_DRAWN, *names):
        state.pop(name, None)
    for name in ("class", "key", "seat"):
        if name in query:
            del query[name]


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
    replica_text.texts().forget(code)


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
        try:  # rebuilt once per replica, then extended as the teacher steps (replica_text)
            snapshot, how = replica_text.texts().snapshot(bundle, code, info.recipe)
        except (ReplayError, SessionError, ValueError) as exc:
            st.error(str(exc))
            return None
        with _live_lock:
            _live[code] = (info.recipe, snapshot)
        if how == replica_text.REPLAYED:
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
