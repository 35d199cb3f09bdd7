"""Under the hood: the training loss, positions (rotary embeddings and the cache), nondeterminism and batching."""
import streamlit as st

from autoreg_ui import controls, lesson_page, messages
from autoreg_ui.lessons.hood import controller as hood
from autoreg_ui.lessons.hood import keys, questions, text
from autoreg_ui.state import session_or_start


def render() -> None:
    """Draw the page; its entry file (``pages/hood.py``) calls this on every run."""
    bundle = lesson_page.set_up(text.TITLE, keys.HOOD_PAGE, questions.QUESTIONS, text.INTRO)
    session = session_or_start()
    if session is None:
        st.stop()
    controls.step_row(keys.HOOD_PAGE)
    messages.show()
    st.text(session.text)
    SECTIONS = {"1 · The training loss": hood.draw_loss,  # the labels are text.LOSS, POSITIONS, DETERMINISM (tested)
                "2 · Positions: rotary embeddings and the cache": hood.draw_positions,
                "3 · Nondeterminism and batch invariance": hood.draw_determinism}
    controls.open_section(SECTIONS, keys.HOOD_SECTION, bundle, session, guides=text.GUIDES)
