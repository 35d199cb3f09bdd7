"""The one step at the end of every script run: the URL holds the tab's state, and a teacher's class has its text.

A click changes the session in its callback or in the page's body; what the change means outside the page (the
link in the address bar, the text a class follows) is written once, after the page has run, from the session as
the run left it. A whole run ends here from ``app.py`` (``run_page``). A rerun of one fragment does not run
``app.py``, so a fragment whose buttons change the session is made with ``fragment`` and ends with the same step.
Each part does its work only when something it shows changed (``Session.version``, the settings, the class).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, MutableMapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import mode as class_mode
from autoreg_ui.sharing import links


def after_run(state: MutableMapping | None = None, query: MutableMapping | None = None) -> None:
    """The URL written from the session and the settings, the tab's place in a class kept in it (after the
    session's parameters, so the address reads as it always has), and a teacher's change published."""
    state = st.session_state if state is None else state
    query = st.query_params if query is None else query
    links.sync_url(state, query)
    class_mode.keep_in_url(state, query)
    class_live.publish(state)


def run_page(page) -> None:
    """Run the chosen page, then ``after_run``: also when the page stops early (``st.stop``, e.g. a prompt that
    does not fit), not when it asks for another run or another page (that run writes the URL)."""
    try:
        page.run()
    except StopException:
        after_run()
        raise
    after_run()


def _fragment_alone() -> bool:
    """Is this run a rerun of fragments only (``app.py`` is not running)?"""
    ctx = get_script_run_ctx()
    return ctx is not None and bool(ctx.fragment_ids_this_run)


def fragment(body: Callable[..., None]) -> Callable[..., None]:
    """``st.fragment`` for a part of a page whose buttons change the session: when the part reruns alone, it ends
    with ``after_run``; in a whole run ``app.py`` does that once, after the page."""
    @functools.wraps(body)
    def part(*args, **kwargs) -> None:
        body(*args, **kwargs)
        if _fragment_alone():
            after_run()

    return st.fragment(part)
