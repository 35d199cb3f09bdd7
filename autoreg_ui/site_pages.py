"""The app's pages, made once per server process.

``st.Page`` resolves and checks its file on every call (13 a run were about 8% of a class follower's redraw),
and an ``st.cache_resource`` written in ``app.py`` is decorated again on every run, which reads the function's
source each time (about 10% of a follower's redraw in ``bench/class_follow.py --profile``). Here the list is
made on the first run that asks and kept in this module, imported once per process. Each run navigates its own
copies (``app.py``), because ``st.navigation`` marks the page it runs.
"""
from __future__ import annotations

import threading

import streamlit as st

_made: list | None = None
_lock = threading.Lock()


def pages() -> list:
    """Every page, in the sidebar's order; the last is the hidden root (see ``_make``)."""
    global _made
    if _made is None:
        with _lock:
            if _made is None:
                _made = _make()
    return _made


def _make() -> list:
    PAGES = [  # noqa: N806 - the app's one page list (tests read it by this name)
        st.Page("pages/0_start.py", title="Start here", icon=":material/flag:", url_path="start"),
        st.Page("pages/1_step.py", title="Step through generation", icon=":material/play_arrow:", url_path="step"),
        st.Page("pages/8_tokens.py", title="Tokens", icon=":material/text_fields:", url_path="tokens"),
        st.Page("pages/2_attention.py", title="Attention and the KV cache", icon=":material/visibility:",
                url_path="attention"),
        st.Page("pages/3_sampling.py", title="Sampling lab", icon=":material/casino:", url_path="sampling"),
        st.Page("pages/4_cost.py", title="Naive vs KV cache", icon=":material/timer:", url_path="cost"),
        st.Page("pages/5_inside.py", title="Inside generation", icon=":material/science:", url_path="inside"),
        st.Page("pages/6_serving.py", title="How servers go fast", icon=":material/speed:", url_path="serving"),
        st.Page("pages/7_glossary.py", title="Glossary", icon=":material/menu_book:", url_path="glossary"),
        st.Page("pages/9_class.py", title="Class", icon=":material/groups:", url_path="class"),
        st.Page("pages/10_hood.py", title="Under the hood", icon=":material/memory:", url_path="hood"),
        st.Page("pages/11_tricks.py", title="More serving tricks", icon=":material/bolt:", url_path="tricks"),
        # the app's root: Start here, or the step page when it carries a link (every link written before /step existed)
        st.Page("pages/1_step.py", title="Step through generation", url_path="home", default=True, visibility="hidden"),
    ]
    return PAGES
