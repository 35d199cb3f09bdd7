"""A lesson path followed in one tab: the stop's note on top of its page (in presenter mode behind the bar's
Notes, so the bar keeps to one row), and ← Previous stop / Next stop →.

The Start page begins a path (``begin``); every page then draws the bar (``bar``, from ``app.py``). Moving
to a stop switches page in the same tab and session with the stop's link as the query (so the page is
rebuilt the way the stop's note assumes), or with the link the teacher left that stop with, when coming
back to it. Presenter mode rides along (the session keeps it; ``embed_options`` survives a page switch),
and a tab on a path is kept by the idle limit for the whole lesson (``limits.keep_for_lesson``).

The state is a plain mapping (tests pass a dict); only ``go``, ``begin_here`` and ``bar`` touch Streamlit.
"""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

import streamlit as st

from autoreg_ui import keys, limits, settings, site_pages
from autoreg_ui import lesson_path_text as text
from autoreg_ui.classroom import desk as class_desk
from autoreg_ui.classroom import live as class_live
from autoreg_ui.sharing import links
from autoreg_ui.sharing.link_codec import EMBED_PARAMS

NOT_CARRIED = (keys.PRESENT, *EMBED_PARAMS)  # presenter mode is the session's, not the stop's
CARRY_PRESENT = "lesson_path_present"  # presenter mode was on when the path switched page
# The bar's text ends inside its border: Streamlit pulls each Markdown block up by its last paragraph's margin,
# and presenter mode makes that margin small, so the note's second line was drawn on the border
BAR_CSS = "<style>.st-key-lesson_path_bar [data-testid=stMarkdownContainer] { margin-bottom: 0 !important; }</style>"
GO = "lesson_path_go"  # a move asked for by a button: (page file, query), done by ``follow`` early in the next run


@dataclass(frozen=True)
class PathStop:
    """One stop: its title, the page (url path), the link's parameters, its minutes and the teacher's note."""
    title: str
    page: str
    params: tuple[tuple[str, str], ...]
    minutes: int
    do: str


@dataclass(frozen=True)
class Path:
    name: str
    stops: tuple[PathStop, ...]


def current(state: Mapping) -> tuple[Path, int] | None:
    """The path this tab follows and the index of its stop, or None."""
    path, at = state.get(keys.PATH), state.get(keys.PATH_AT)
    if not isinstance(path, Path) or not isinstance(at, int) or not 0 <= at < len(path.stops):
        return None
    return path, at


def _query(query: Mapping) -> dict[str, list[str]]:
    """A query as name → values, without presenter mode (a plain dict of str or list, or st.query_params)."""
    out = {}
    for name in query:
        if name.lower() in NOT_CARRIED:
            continue
        values = query.get_all(name) if hasattr(query, "get_all") else query[name]
        out[name] = [values] if isinstance(values, str) else list(values)
    return out


def move(state: MutableMapping, index: int, query_now: Mapping, presenting: bool) -> tuple[str, dict]:
    """Go to stop ``index`` of the path: remember the link of the stop being left, and return the page file
    and the query to open (the link it was left with, or the stop's own); presenter mode stays on."""
    found = current(state)
    if found is None:
        raise ValueError("no lesson path is being followed")
    path, at = found
    index = max(0, min(int(index), len(path.stops) - 1))
    left = dict(state.get(keys.PATH_LEFT) or {})
    if path.stops[at].page in site_pages.BY_URL_PATH and index != at:
        left[at] = _query(query_now)
    state[keys.PATH_LEFT] = left
    state[keys.PATH_AT] = index
    stop = path.stops[index]
    params = left.get(index) if index in left else {name: [value] for name, value in stop.params}
    params = {name: list(values) for name, values in params.items()}
    if presenting:
        params["present"] = ["1"]
    return site_pages.file(stop.page), params


def sidebar_values(params: Mapping[str, list[str]]) -> tuple[dict, dict]:
    """Split a stop's query into the sidebar's settings (their widgets' values: a page switch cannot put them in
    the URL, Streamlit binds them there) and the rest. A setting the link leaves out goes back to its default."""
    rest = {name: values for name, values in params.items() if name not in (*SETTING_BY_KEY, keys.CFG_STOPS)}
    widgets: dict = {keys.CFG_STOPS: params.get(keys.CFG_STOPS, [""])[-1]}
    for key, setting in SETTING_BY_KEY.items():
        default = setting.kind(getattr(settings.SIDEBAR_DEFAULTS, setting.field))
        try:
            value = setting.kind(params[key][-1]) if key in params else default
        except (TypeError, ValueError):
            value = default
        widgets[key] = value if setting.low <= value <= setting.high else default
    return widgets, rest


SETTING_BY_KEY = {s.key: s for s in settings.SETTINGS}


def prepare(state: MutableMapping, index: int, query_now: Mapping, presenting: bool) -> None:
    """A button's callback (before the widgets are drawn): set the stop's sidebar settings and queue the move."""
    page, params = move(state, index, query_now, presenting)
    widgets, rest = sidebar_values(params)
    state.update(widgets)
    state[GO] = (page, rest)


def begin(state: MutableMapping, path: Path, index: int = 0) -> None:
    """Follow ``path`` from its stop ``index`` (a fresh start: no stop remembered as left)."""
    state[keys.PATH] = path
    state[keys.PATH_AT] = max(0, min(int(index), len(path.stops) - 1))
    state[keys.PATH_LEFT] = {}


def stop_for_class(path: Path, at: int) -> dict:
    """The stop as the class store keeps it: students' pages say where the class is and can open it."""
    stop = path.stops[at]
    return {"number": at + 1, "total": len(path.stops), "title": stop.title, "page": stop.page,
            "params": [list(p) for p in stop.params]}


def leave(state: MutableMapping) -> None:
    for key in (keys.PATH, keys.PATH_AT, keys.PATH_LEFT):
        state.pop(key, None)


def _presenting() -> bool:
    return bool(st.session_state.get(keys.PRESENT, False))


def go(index: int) -> None:
    """The bar's buttons (a callback): open stop ``index`` in this tab, in the same session."""
    prepare(st.session_state, index, st.query_params, _presenting())


def begin_here(path: Path, index: int = 0) -> None:
    """The Start page's buttons (a callback): follow ``path`` and open its stop ``index`` right here."""
    begin(st.session_state, path, index)
    prepare(st.session_state, index, {}, _presenting())
    limits.keep_for_lesson(True)


def carry_presenter(state: MutableMapping) -> None:
    """First thing in a run: presenter mode, on when a path switched page, is on again (before its toggle)."""
    if state.pop(CARRY_PRESENT, False):
        state[keys.PRESENT] = True


def follow() -> None:
    """Early in a run (``app.py``): do the move a button asked for, a page switch in this tab."""
    target = st.session_state.pop(GO, None)
    if target is not None:
        # the toggle is not drawn in the switching run, so Streamlit forgets its value: kept here for the next run
        st.session_state[CARRY_PRESENT] = "present" in target[1]
        links.expect_link(st.session_state)  # the stop's address is a link to replay, not one written before
        st.switch_page(target[0], query_params=target[1])


def bar(page_url_path: str) -> None:
    """On every page while a path is followed: where the lesson is, the stop's note, and the way on."""
    found = current(st.session_state)
    if found is None:
        if class_live.is_teacher(st.session_state):  # a class without a path: the desk alone
            class_desk.desk(st.container(border=True, key="class_desk_bar") if page_url_path != "class" else st,
                            page_url_path)
        return
    path, at = found
    limits.keep_for_lesson(True)  # every run: a restarted seat table learns it again
    stop = path.stops[at]
    here = page_url_path == stop.page
    st.html(BAR_CSS)
    box = st.container(border=True, key="lesson_path_bar")
    # On a projector the stop's note is the teacher's (like a slide's speaker notes): one click away, so the
    # bar keeps to one line and the stop's step, strip and chart fit the 720 px screen under it.
    notes_folded = here and _presenting()
    if notes_folded:  # one row: the line takes the room the buttons leave
        buttons = box.container(horizontal=True, vertical_alignment="center", gap="small")
        buttons.markdown(text.where_short(at, len(path.stops), stop.title, stop.minutes), width="stretch")
    else:
        left, right = box.columns([5, 4], vertical_alignment="center")
        left.markdown(text.where_text(path.name, at, len(path.stops), stop.title, stop.minutes))
        box.markdown(stop.do if here else text.away_text(stop.title))
        buttons = right.container(horizontal=True, horizontal_alignment="right", gap="small")
    notes = buttons.popover(text.NOTES, help=text.NOTES_HELP) if notes_folded else None
    if notes is not None:
        notes.markdown(text.notes_heading(path.name, stop.title))
        notes.markdown(stop.do)
    if not here:
        buttons.button(text.BACK, key=keys.PATH_NEXT + "_back", help=text.BACK_HELP, on_click=go, args=(at,))
    buttons.button(text.PREVIOUS, key=keys.PATH_PREVIOUS, disabled=at == 0, help=text.PREVIOUS_HELP,
                   on_click=go, args=(at - 1,))
    buttons.button(text.NEXT, key=keys.PATH_NEXT, type="primary", disabled=at == len(path.stops) - 1,
                   help=text.NEXT_HELP, on_click=go, args=(at + 1,))
    if (notes or buttons).button(text.LEAVE, key=keys.PATH_LEAVE, type="tertiary", help=text.LEAVE_HELP):
        leave(st.session_state)
        limits.keep_for_lesson(False)
        st.rerun()
    class_desk.desk(box, page_url_path, stop_for_class(path, at), start_where=buttons if notes_folded else box)
