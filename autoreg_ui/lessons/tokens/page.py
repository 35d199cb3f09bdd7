"""Tokens: the prompt as the model reads it (ids, pieces, bytes), and how other scripts tokenize."""
import streamlit as st

from autoreg_core.engine.tokens import script_count, token_views
from autoreg_ui import guide, lesson_page
from autoreg_ui.charts import show_chart
from autoreg_ui.lessons.tokens import keys, questions, text
from autoreg_ui.lessons.tokens.figures import scripts_figure
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import current_session, keep_widget_values
from autoreg_ui.step_figures import chunks_html


def render() -> None:
    """Draw the page; its entry file (``pages/tokens.py``) calls this on every run."""
    bundle = lesson_page.set_up(text.TITLE, "tokens", questions.QUESTIONS, text.INTRO, guides=text.GUIDES)
    tok = bundle.tokenizer
    session = current_session()
    keep_widget_values(st.session_state, (keys.TOKENS_TEXT,))  # what was typed survives a page change
    if keys.TOKENS_TEXT not in st.session_state:
        st.session_state[keys.TOKENS_TEXT] = session.text if session is not None else text.SAMPLES["English"]
    typed = st.text_area(text.BOX, key=keys.TOKENS_TEXT, height=100, max_chars=2000)
    ids = tok(typed, add_special_tokens=False)["input_ids"] if typed else []
    if ids:
        views = token_views(tok, ids)
        st.markdown(chunks_html(views), unsafe_allow_html=True)  # every piece escaped: typed text is never HTML
        st.caption(text.count_sentence(len(ids), len(typed), len(typed.encode("utf-8"))))
        st.caption(text.CHUNKS_NOTE)
        st.dataframe(text.token_rows(views), hide_index=True, key=keys.TOKENS_TABLE)
        st.markdown(text.TABLE_NOTE)
    else:
        st.info(text.EMPTY)

    st.header(text.SCRIPTS_TITLE)
    guide.show(text.GUIDES, "scripts")
    explain(text.SCRIPTS_INTRO)
    rows = [script_count(tok, name, sample) for name, sample in text.SAMPLES.items()]
    show_chart(scripts_figure(rows), key=keys.TOKENS_CHART, filename="tokens-per-character")
    st.markdown(text.scripts_sentence(rows))
    st.dataframe(text.script_rows(rows), hide_index=True, key=keys.TOKENS_SCRIPTS_TABLE)

    st.header(text.VOCABS_TITLE)
    guide.show(text.GUIDES, "vocabs")
    explain(text.VOCABS_INTRO)
    st.dataframe(text.vocab_rows(bundle.name, len(tok)), hide_index=True, key=keys.TOKENS_VOCABS_TABLE)
