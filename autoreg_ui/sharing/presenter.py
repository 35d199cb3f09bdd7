"""Presenter mode: what a projector needs — large type, explanations folded away, big step buttons, dark.

On with the sidebar toggle or ``?present=1``. Large type is one CSS rule on the root font size (the app
is sized in rem, so text, widgets and buttons grow together); charts grow through ``charts.style``.
The dark theme is Streamlit's own ``[theme.dark]`` from ``.streamlit/config.toml``; a page can only
pick it when it loads (``?embed_options=dark_theme``), so switching presenter mode reloads the page
once, and the page's link rebuilds the session exactly as it was.
"""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping

import streamlit as st

from autoreg_ui import keys, palette
from autoreg_ui.sharing import link_codec

ROOT_FONT_PX = 22  # against the theme's 16: every rem-sized thing grows by 1.375
BIG_BUTTON_REM = 1.1

# in any theme: the token chips keep dark text on their light backgrounds (a dark theme would make it white);
# the theme's text colour, which reads at 7:1 or more on every shade of the probability ramp (palette.PROB_RAMP)
BASE_CSS = f"<style>.tokstrip .tok, .attstrip .atok {{ color: {palette.TEXT}; }}</style>"
# The dark theme's light-blue primary colour reads well as text on the dark page, but white text on it
# does not (2.5:1): primary buttons get dark text instead (7.6:1, WCAG AA). A disabled one keeps the theme's
# text colour: its background is the dark page's grey, where dark text could not be read (the last stop's
# "Next stop" was an empty box). (``^=``: a form's primary submit button is ``stBaseButton-primaryFormSubmit``.)
DARK_CSS = ('<style>[data-testid^="stBaseButton-primary"]:not(:disabled), '
            '[data-testid^="stBaseButton-primary"]:not(:disabled) p { color: #0b0e14 !important; }</style>')

CSS = f"""
<style>
html {{ font-size: {ROOT_FONT_PX}px !important; }}
[class*="st-key-teacher_row"] button {{ min-height: 2.8rem; padding: 0.3rem 0.8rem; }}
[class*="st-key-teacher_row"] {{ gap: 0.5rem !important; }}
[class*="st-key-teacher_row"] button p {{ font-size: {BIG_BUTTON_REM}rem; font-weight: 600; }}
.tokstrip {{ font-size: 1.15rem !important; }}
[data-testid="stMainBlockContainer"] {{ padding-top: 0.6rem; padding-bottom: 2rem; }}
[data-testid="stHeader"] {{ background: transparent; pointer-events: none; }}
[data-testid="stHeader"] * {{ pointer-events: none; }}
[data-testid="stHeader"] button {{ pointer-events: auto; }}
[data-testid="stMainBlockContainer"] h1 {{ font-size: 1.7rem; padding: 0.2rem 0; }}
[data-testid="stSidebarNav"] span {{ white-space: normal; }}
.st-key-lesson_path_bar {{ padding: 0.4rem 0.8rem !important; gap: 0.2rem; }}
.st-key-lesson_path_bar button {{ min-height: 2rem; padding: 0.1rem 0.6rem; }}
.st-key-lesson_path_bar p {{ margin-bottom: 0.1rem; font-size: 0.82rem; }}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] {{ gap: 0.45rem; }}
</style>
"""

_THEME_JS = """
<script>
(function () {
  const want = %s;
  const parts = window.location.search.replace(/^\\?/, "").split("&").filter(part => part);
  if (parts.includes("embed_options=dark_theme") === want) return;
  const kept = parts.filter(part => !/^present=/.test(part) && part !== "embed_options=dark_theme");
  if (want) kept.push("present=1", "embed_options=dark_theme");
  const search = kept.length ? "?" + kept.join("&") : "";
  setTimeout(function () { window.location.replace(window.location.pathname + search); }, 300);
})();
</script>
"""


def active(state: Mapping | None = None) -> bool:
    """Is this tab in presenter mode?"""
    state = st.session_state if state is None else state
    return bool(state.get(keys.PRESENT, False))


def read_link(query: Mapping, state: MutableMapping) -> bool:
    """``?present=1`` turns presenter mode on (once per distinct value, so the toggle wins afterwards)."""
    raw = link_codec.values(query).get(link_codec.PRESENT, [None])[-1]
    if raw is not None and state.get(keys.PRESENT_SEEN) != raw:
        state[keys.PRESENT_SEEN] = raw
        try:
            state[keys.PRESENT] = link_codec.flag(raw, "presenter mode")
        except link_codec.LinkError:
            pass  # link_codec.read says why
    return active(state)


def _changed() -> None:
    st.session_state[keys.THEME_RELOAD] = True


def toggle(where=st) -> None:
    where.toggle("Presenter mode", key=keys.PRESENT, on_change=_changed,
                 help="Large type, explanations folded, big step buttons, dark theme. Reloads the page once; "
                      "the link rebuilds the session. Same as opening the page with ?present=1.")


def apply(state: MutableMapping | None = None) -> None:
    """Draw presenter mode's CSS, and reload once into the matching theme when the mode changed."""
    state = st.session_state if state is None else state
    on, changed = active(state), state.pop(keys.THEME_RELOAD, False)
    st.html(BASE_CSS + (CSS if on else "") + (DARK_CSS if on or st.context.theme.type == "dark" else ""))
    if on or changed:
        st.html(_THEME_JS % ("true" if on else "false"), unsafe_allow_javascript=True)


def dark() -> bool:
    """Charts go dark in presenter mode or when the learner picked the dark theme."""
    return active() or st.context.theme.type == "dark"


def fold(intro: str | None, caption: str | None, latex: str | None, where=st) -> None:
    """A page head's explanation, caption and formula, together in one closed expander (presenter mode)."""
    if intro is None and caption is None and latex is None:
        return
    with where.expander("Explanation"):
        if intro is not None:
            st.markdown(intro)
        if caption is not None:
            st.caption(caption)
        if latex is not None:
            st.latex(latex)


def explain(text: str, where=st) -> None:
    """An explanation: shown as Markdown, or folded into a closed expander in presenter mode."""
    if active():
        where.expander("Explanation").markdown(text)
    else:
        where.markdown(text)
