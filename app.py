"""autoreg: watch a real language model write, one token at a time.

Entry point: ``streamlit run app.py``. It builds the navigation and the shared sidebar, then runs
the chosen page from ``pages/``.
"""
import streamlit as st

from autoreg_ui.sidebar import render_sidebar

st.set_page_config(page_title="autoreg — how LLMs generate text", page_icon="🔁", layout="wide")

PAGES = [
    st.Page("pages/1_step.py", title="Step through generation", icon=":material/play_arrow:", url_path="step", default=True),
    st.Page("pages/2_attention.py", title="Attention and the KV cache", icon=":material/visibility:", url_path="attention"),
    st.Page("pages/3_sampling.py", title="Sampling lab", icon=":material/casino:", url_path="sampling"),
    st.Page("pages/4_cost.py", title="Naive vs KV cache", icon=":material/timer:", url_path="cost"),
]

page = st.navigation(PAGES)
with st.sidebar:
    render_sidebar()
page.run()
