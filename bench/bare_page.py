"""The floor for one click: a bare Streamlit page of the step page's shape, with no model.

    streamlit run bench/bare_page.py

A fragment with a "Next token" button, a token strip (escaped HTML chips, like the step page's)
and a 15-bar plotly chart. Each click appends a pseudo-random word and redraws the chart from 15
fresh numbers: what any Streamlit page of this shape costs per click, measured in the same run as
the app by ``bench/click_cost.py`` so the app's figures can be read as ratios of it.
"""
import html
import random

import plotly.graph_objects as go
import streamlit as st

WORDS = ["the", " cat", " sat", " on", " mat", ",", " and", " a", " dog", " ran", " away", ".", " It", " was", " late"]


def next_token() -> None:
    st.session_state.setdefault("tokens", []).append(random.choice(WORDS))


@st.fragment
def stepper() -> None:
    st.button("Next token", key="bare_next", type="primary", on_click=next_token)
    tokens = st.session_state.get("tokens", [])
    chips = "".join(f'<span class="tok gen" title="position {i}">{html.escape(t)}</span>'
                    for i, t in enumerate(tokens))
    st.markdown(f'<div class="tokstrip">{chips}</div>', unsafe_allow_html=True)
    st.metric("Generated tokens", len(tokens))
    rng = random.Random(len(tokens))
    probs = sorted((rng.random() for _ in range(15)), reverse=True)
    fig = go.Figure(go.Bar(x=probs, y=[f"#{i}" for i in range(15)], orientation="h"))
    fig.update_layout(height=420, yaxis={"autorange": "reversed"}, title=f"Step {len(tokens)}")
    st.plotly_chart(fig, key=f"bare_chart_{len(tokens)}")


st.title("Bare page")
stepper()
