"""The app's page registry: every page named once (entry file, URL path, title, icon, the lesson that owns it).

Navigation (``app.py``), lesson paths, the class's page switches, the glossary's link and the tests read the
pages here; nothing else spells a page's file. ``SITE_PAGES`` is plain data, so it can be read without a
running app.

``st.Page`` resolves and checks its file on every call (13 a run were about 8% of a class follower's redraw),
and an ``st.cache_resource`` written in ``app.py`` is decorated again on every run, which reads the function's
source each time (about 10% of a follower's redraw in ``bench/class_follow.py --profile``). So the ``st.Page``
list is made on the first run that asks and kept in this module, imported once per process. Each run navigates
its own copies (``app.py``), because ``st.navigation`` marks the page it runs.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class SitePage:
    """One page of the app. Its entry file is ``pages/<url_path>.py``; ``lesson`` names the package under
    ``autoreg_ui/lessons/`` whose page it is (None for the class page, drawn by ``autoreg_ui/classroom``)."""

    url_path: str
    title: str
    icon: str
    lesson: str | None

    @property
    def file(self) -> str:
        return f"pages/{self.url_path}.py"


SITE_PAGES: tuple[SitePage, ...] = (  # the sidebar's order
    SitePage("start", "Start here", ":material/flag:", "start"),
    SitePage("step", "Step through generation", ":material/play_arrow:", "step"),
    SitePage("tokens", "Tokens", ":material/text_fields:", "tokens"),
    SitePage("attention", "Attention and the KV cache", ":material/visibility:", "attention"),
    SitePage("sampling", "Sampling lab", ":material/casino:", "sampling"),
    SitePage("cost", "Naive vs KV cache", ":material/timer:", "cost"),
    SitePage("inside", "Inside generation", ":material/science:", "inside"),
    SitePage("serving", "How servers go fast", ":material/speed:", "serving"),
    SitePage("glossary", "Glossary", ":material/menu_book:", "glossary"),
    SitePage("class", "Class", ":material/groups:", None),
    SitePage("hood", "Under the hood", ":material/memory:", "hood"),
    SitePage("tricks", "More serving tricks", ":material/bolt:", "tricks"),
)
BY_URL_PATH = {page.url_path: page for page in SITE_PAGES}
ROOT_OPENS = "step"  # the app's hidden root: the step page (every link written before /step existed opens there)


def file(url_path: str) -> str:
    """The entry file of the page at ``url_path`` (``st.switch_page`` and ``st.page_link`` take it)."""
    return BY_URL_PATH[url_path].file


def lesson_packages() -> dict[str, str]:
    """URL path → the dotted name of the lesson package that owns the page (lesson pages only)."""
    return {p.url_path: f"autoreg_ui.lessons.{p.lesson}" for p in SITE_PAGES if p.lesson is not None}


_made: list | None = None
_lock = threading.Lock()


def pages() -> list:
    """Every page as an ``st.Page``, in the sidebar's order; the last is the hidden root (see ``_make``)."""
    global _made
    if _made is None:
        with _lock:
            if _made is None:
                _made = _make()
    return _made


def _make() -> list:
    import streamlit as st  # here, so that the registry's data is read without Streamlit

    made = [st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path) for p in SITE_PAGES]
    root = BY_URL_PATH[ROOT_OPENS]
    # the app's root: Start here, or the step page when it carries a link (app.py decides which)
    made.append(st.Page(root.file, title=root.title, url_path="home", default=True, visibility="hidden"))
    return made
