"""What the tabs of a class share in this server process: the class store, who a tab is, the teacher's live text.

The class lives in the store (``store``: a SQLite file, or PostgreSQL when replicas share classes): a restarted
server finds it again. The teacher's steps are kept there as a replay recipe; the live text every follower draws
is the teacher's own session, read as one snapshot (``Session.snapshot``) that the teacher's tab registers in
this process when it publishes, so a follower computes nothing the teacher did not. A process without the
teacher's tab (after a restart, or another replica) rebuilds it from the recipe once and then extends it step by
step as the teacher acts (``replica_text``). A sampling round's text (its KV cache) is kept the same way. What the
process keeps is held by ``autoreg_server.live_classes``; this module builds it and draws.

Who is who is in the tab's address: ``class=CODE`` for everyone, ``seat=ID`` for a student (an anonymous
id), ``key=KEY`` for the teacher; ``mode`` reads it into the tab's state. The views (``teacher``,
``student``) and ``mode`` build on this module; it imports none of them.
"""
from __future__ import annotations

import json
import secrets
import weakref

import streamlit as st

from autoreg_core.engine import prefix as prefixes
from autoreg_core.engine.replay import ReplayError, recipe_from_dict, recipe_of, recipe_to_dict, replay
from autoreg_core.engine.session import SessionError, SessionSnapshot
from autoreg_server import live_classes, settings
from autoreg_server.class_store import ClassError, ClassInfo, ClassStore, Round
from autoreg_ui import keys, limits, messages
from autoreg_ui.classroom import replica_text, text
from autoreg_ui.state import current_bundle, current_config, current_session, session_runtime


def store() -> ClassStore:
    """This server's classes (one SQLite file: ``AUTOREG_CLASS_DB``, default under the app's cache dir)."""
    return live_classes.shared().store()


# ---------------------------------------------------------------- who this tab is
def is_teacher(state) -> bool:
    return bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_KEY))


def is_student(state) -> bool:
    return bool(state.get(keys.CLASS_CODE) and state.get(keys.CLASS_SEAT))


def is_follower(state) -> bool:
    return is_student(state) and state.get(keys.CLASS_MODE, "following") == "following"


def leave(state, query, *names: str) -> None:
    """Forget this tab's class (and its role) in the state and the address."""
    for name in (keys.CLASS_CODE, keys.CLASS_KEY, keys.CLASS_SEAT, keys.CLASS_PUBLISHED, keys.CLASS_DRAWN,
                 VERSION_SEEN, *names):
        state.pop(name, None)
    for name in ("class", "key", "seat"):
        if name in query:
            del query[name]


def trusted_proxies() -> set[str]:
    """The proxies whose ``X-Forwarded-For`` the operator trusts (``AUTOREG_TRUSTED_PROXIES=10.0.0.5,127.0.0.1``)."""
    return set(settings.current().trusted_proxies)


def client_address(peer: str | None, forwarded: list[str], trusted: set[str]) -> str | None:
    """Who a connection is: its own address (``peer``), unless it comes from a trusted proxy; then the address
    that proxy says it forwarded for, read right to left past every trusted proxy (a client cannot forge the
    hops a trusted proxy appended, only the ones before them)."""
    if not peer or peer not in trusted:
        return peer or None
    hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        if hop not in trusted:
            return hop
    return hops[0] if hops else peer


def _connection() -> tuple[str | None, list[str]]:
    """This tab's connection: the address it comes from (loopback included) and its X-Forwarded-For values."""
    peer = None
    try:  # Streamlit's st.context.ip_address hides loopback addresses; the client context has the raw one
        from streamlit.runtime.context import _get_client_context

        client = _get_client_context()
        peer = getattr(client, "remote_ip", None) if client is not None else None
    except Exception:  # noqa: BLE001 - another Streamlit: fall back to the public property
        peer = None
    if not peer:
        peer = getattr(st.context, "ip_address", None)
    try:
        forwarded = list(st.context.headers.get_all("X-Forwarded-For"))
    except Exception:  # noqa: BLE001 - no headers outside a browser session (AppTest)
        forwarded = []
    return (peer if isinstance(peer, str) else None), forwarded


def source() -> str:
    """Who a wrong code or key counts against: the client's address (behind a proxy the operator trusts, the
    one it forwarded for), else this tab (an id kept in its state). The store also counts every source
    together for codes, so new tabs gain nothing."""
    address = client_address(*_connection(), trusted_proxies())
    if address:
        return address
    return st.session_state.setdefault(keys.CLASS_SOURCE, "tab-" + secrets.token_hex(8))


def base_url() -> str:
    """The app's address as the browser sees it (the join link starts with it)."""
    url = getattr(st.context, "url", None) or ""
    return url.split("?")[0].rstrip("/").rsplit("/", 1)[0] if url.count("/") > 2 else url.rstrip("/")


# ---------------------------------------------------------------- the teacher publishes
TAB = "class_tab"  # this tab's own id (which of the teacher's tabs leads)
SYNCED = keys.CLASS_PUBLISHED  # (the class's recipe, this tab's own) when this tab last loaded or published
VERSION_SEEN = "class_version_seen"  # the class version this teacher tab last checked
MINE_AT = "class_mine_at"  # this tab's text as the class would store it, and the session version it was read at


def tab_id(state) -> str:
    return state.setdefault(TAB, secrets.token_hex(8))


def _mine(session, config) -> tuple[dict, bool]:
    """This tab's text as the class would store it, and whether it has its next-token logits yet."""
    snapshot = session.snapshot()
    return recipe_to_dict(recipe_of(snapshot, config)), snapshot.pending_logits is not None


def _mine_now(state, session, config) -> tuple[dict, bool]:
    """``_mine``, read again only when the session, its ``version`` or the settings changed since: a teacher's run
    that changed nothing costs no snapshot of the whole text."""
    version = session.version  # read first: a change made while the text is read is not missed
    held = state.get(MINE_AT)
    if held is not None and held[0]() is session and held[1] == version and held[2] == config:
        return held[3]
    mine = _mine(session, config)
    state[MINE_AT] = (weakref.ref(session), version, config, mine)
    return mine


def publish(state=None, redraw: bool = True) -> None:
    """The teacher's tab and the class's text kept in step (called at the end of every run of a teacher's tab,
    ``after_run``; right after a step, Undo or Reset, before the page draws, ``controls``; and where the class
    page needs the text published before it goes on).

    Only this tab's own action changes the class's text: a tab that has not yet loaded the class (a reload, a
    bookmark, a second device) or that another teacher tab has moved past first loads the class's current
    text; after that, a change of its own session (a step, Reset, Undo, a new prompt) is published, and this
    tab leads. Followers get it through the class's feed as soon as it is published. ``redraw``: after loading
    the class's text, run the page again (the caller has drawn nothing yet: False).
    """
    state = st.session_state if state is None else state
    if not is_teacher(state):
        return
    code = state[keys.CLASS_CODE]
    session, config = current_session(), current_config()
    mine = None if session is None else _mine_now(state, session, config)
    synced = state.get(SYNCED)
    info = None
    if synced is None or mine != synced[1]:
        info = store().info(code)
    else:  # nothing changed here: only a change made elsewhere (another teacher tab) needs loading
        pulse = store().pulse(code)
        if pulse is not None and pulse[0] != state.get(VERSION_SEEN):
            info = store().info(code)
    if info is None:
        return
    state[VERSION_SEEN] = info.version
    moved_elsewhere = synced is not None and info.recipe != synced[0]
    if synced is None and mine is not None and info.recipe == mine[0]:
        state[SYNCED] = (info.recipe, mine)  # a reload whose own address rebuilt the class's text: it is loaded
        return
    if info.recipe and (synced is None or (moved_elsewhere and mine == synced[1])):
        loaded = load_class_text(code, info)
        if loaded is not None:
            state[SYNCED] = (info.recipe, _mine(loaded, config))
            if redraw:  # the page was drawn from the older text (the end of a run, e.g. the step page): again
                st.rerun()
        return
    if mine is None or (synced is not None and mine == synced[1]):
        return  # nothing of this tab's own changed
    snapshot = session.snapshot()
    # registered before the store moves, so no follower rebuilds what the teacher has
    live_classes.shared().publish(code, mine[0], snapshot, tab_id(state))
    try:
        store().set_recipe(code, state[keys.CLASS_KEY], mine[0])
    except ClassError as exc:
        messages.say(str(exc), "error", state)
        return
    state[SYNCED] = (mine[0], mine)


def load_class_text(code: str, info: ClassInfo):
    """The class's current text as this teacher tab's own session (the teacher's snapshot when this process
    has it, else one replay of the recipe); None (with a message) when it cannot be rebuilt."""
    bundle = current_bundle()
    if bundle is None:
        return None
    try:
        recipe = recipe_from_dict(info.recipe)
        session = replay(bundle, recipe, **session_runtime(bundle))
        session.next_pipeline(recipe.config_at(max(1, len(session.records))))  # the logits guesses need
    except (ReplayError, SessionError, ValueError) as exc:
        st.error(str(exc))
        return None
    st.session_state[keys.SESSION] = session
    limits.hold(session)
    live_classes.shared().keep_text(code, info.recipe, session.snapshot())
    return session


def warm_classes(bundle, limit: int = 20) -> int:
    """At server start (``serve``), before any tab: every open class's text rebuilt from its recipe and kept
    here, newest classes first, at most ``limit``; so after a restart neither the teacher's reload nor the
    first student waits for the rebuild. Returns how many were rebuilt."""
    classes = store()
    built = 0
    for code in reversed(classes.codes()[-limit:]):
        info = classes.info(code)
        if info is None or not info.recipe:
            continue
        try:
            recipe = recipe_from_dict(info.recipe)
            session = replay(bundle, recipe, **session_runtime(bundle))
            session.next_pipeline(recipe.config_at(max(1, len(session.records))))
        except (ReplayError, SessionError, ValueError):
            continue  # the first tab of that class rebuilds it and says why it cannot
        live_classes.shared().keep_text(code, info.recipe, session.snapshot())
        built += 1
    return built


def leads(state) -> bool | None:
    """Whether this teacher tab made the class's latest change; None when no tab has acted on the class since
    this server started (after a restart every teacher tab would otherwise say it leads until one acts)."""
    leader = live_classes.shared().leader(state.get(keys.CLASS_CODE))
    return None if leader is None else leader == tab_id(state)


def take_lead(state) -> None:
    """The tab that started the class leads it before its first step."""
    live_classes.shared().set_leader(state[keys.CLASS_CODE], tab_id(state))


def forget(code: str) -> None:
    """A class that ended: its live snapshot goes."""
    live_classes.shared().forget(code)
    replica_text.texts().forget(code)


# ---------------------------------------------------------------- what the class shares in this process
def class_snapshot(code: str, info: ClassInfo) -> SessionSnapshot | None:
    """The teacher's text at the class's recipe: the teacher's own snapshot, or (after a restart) one replay."""
    try:
        found = held_or_rebuilt(code, info, current_bundle)
    except (ReplayError, SessionError, ValueError) as exc:
        st.error(str(exc))
        return None
    if found is None:
        return None
    snapshot, how = found
    if how == replica_text.REPLAYED:
        st.info(text.REBUILT.format(steps=len(snapshot.records)))
    return snapshot


def held_or_rebuilt(code: str, info: ClassInfo, bundle_of) -> tuple[SessionSnapshot, str] | None:
    """``class_snapshot`` without the page: the snapshot and how it was had (``replica_text.HELD`` when this
    process holds it at the recipe), None without a recipe or a model (``bundle_of()`` returned None); a text
    that cannot be rebuilt raises. Also what the class's feed builds from, outside any tab."""
    if not info.recipe:
        return None
    live = live_classes.shared()
    held = live.text(code)
    if held is not None and held[0] == info.recipe:
        return held[1], replica_text.HELD
    bundle = bundle_of()
    if bundle is None:
        return None
    with live.build_lock(code):
        held = live.text(code)
        if held is not None and held[0] == info.recipe:
            return held[1], replica_text.HELD
        # rebuilt once per replica, then extended as the teacher steps (replica_text)
        snapshot, how = replica_text.texts().snapshot(bundle, code, info.recipe, **session_runtime(bundle))
        live.set_text(code, info.recipe, snapshot)
        return snapshot, how


def memo_key(what: tuple, recipe: dict | None, model: str) -> tuple:
    """What a drawn piece of a class's text depends on: the class and the piece (``what``), the model, and the
    whole recipe (prompt, chat, seed, every step's settings, forced and listed tokens): a teacher's step, Undo,
    Reset, new prompt or new settings is a new key."""
    return (*what, model, json.dumps(recipe, sort_keys=True, separators=(",", ":")))


def memo(what: tuple, recipe: dict | None, model: str, build):
    """A piece every follower of a class draws the same (the token strip's HTML, the last step's figure), built
    once per text in this process instead of once per follower and redraw. ``build`` must not depend on
    anything but the class's text at ``recipe``; what it returns is shared and must not be changed."""
    return live_classes.shared().memo(memo_key(what, recipe, model), build, ("memo", *what))


def keep_prefix(rid: int, prefix: prefixes.Prefix) -> None:
    """The text a sampling round draws from, with its KV cache (a copy: the teacher's session moves on)."""
    live_classes.shared().keep_prefix(rid, prefix)


def round_prefix(rnd: Round) -> prefixes.Prefix | None:
    """The round's text ready to decode from: kept by the teacher's tab, or (after a restart) one prefill."""
    live = live_classes.shared()
    held = live.prefix(rnd.id)
    if held is not None:
        return held
    bundle = current_bundle()
    if bundle is None:
        return None
    return live.round_prefix(rnd.id, lambda: prefixes.prefill(bundle, rnd.context))
