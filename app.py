"""autoreg: watch a real language model write, one token at a time.

Entry point: ``streamlit run app.py``. It reads the link (once), builds the navigation and the shared
sidebar, replays what the link or a loaded file asks for, then runs the chosen page from ``pages/``
and keeps the URL and a teacher's class current (``after_run``).
"""
import copy

import streamlit as st

from autoreg_ui import after_run, lesson_path, limits, messages, site_pages
from autoreg_ui.charts import install_export_script
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import mode as class_mode
from autoreg_ui.sharing import links, presenter
from autoreg_ui.sidebar import render_sidebar, render_tools
from autoreg_ui.state import current_bundle

lesson_path.carry_presenter(st.session_state)  # a path's page switch keeps presenter mode on
presenting = presenter.read_link(st.query_params, st.session_state)
st.set_page_config(page_title="autoreg — how LLMs generate text", page_icon="🔁", layout="wide",
                   initial_sidebar_state="collapsed" if presenting else "auto")
limits.gate()  # a seat for this tab, or the class-is-full page (the operator's AUTOREG_MAX_SESSIONS)
link_notes = links.read_on_load(st.session_state, st.query_params)  # before the bound widgets take the URL

# Text wraps onto a second line instead of ending in "…": page names in the sidebar, button labels and metrics
# (presenter mode's large type in a column narrowed by the open sidebar would cut them)
WRAP_CSS = ("<style>[data-testid=stSidebarNavLink] { height: auto; min-height: 2rem; }"
            ":is([data-testid=stSidebarNavLink], [data-testid=stMain] button, [data-testid=stMetricLabel],"
            " [data-testid=stMetricValue]) :is([data-testid=stMarkdownContainer], p, div)"
            " { white-space: normal; overflow: visible; text-overflow: clip; }</style>")

pages_now = [copy.copy(p) for p in site_pages.pages()]  # this run's own copies (st.navigation marks one)

page = st.navigation(pages_now)
lesson_path.follow()  # a path's ← Previous stop / Next stop → asked for another page: switch to it in this tab
class_mode.read_link(st.session_state, st.query_params)
if page.url_path == "" and class_mode.wants_class_page(st.query_params):
    st.switch_page(site_pages.file("class"), query_params=st.query_params.to_dict())  # the join link, /?class=CODE
if page.url_path == "" and not links.asks_for_a_page(st.query_params):
    st.switch_page(pages_now[0], query_params=st.query_params.to_dict())  # a bare / opens Start here
following = class_live.is_follower(st.session_state)  # the teacher's settings apply: the sidebar leaves ours out
with st.sidebar:
    st.html(WRAP_CSS)
    render_sidebar(following=following)
presenter.apply()
install_export_script()  # once per run, outside every fragment
for note in link_notes:
    st.warning(messages.plain(note))
links.replay_pending(current_bundle(), st.session_state, attention=page.url_path == "attention")
if not following:  # a follower has no text of its own to share, save or load
    render_tools()
lesson_path.bar(page.url_path)
class_mode.heartbeat(page.url_path)
after_run.run_page(page)  # then, once: the URL, the tab's place in a class, a teacher's change to the class
