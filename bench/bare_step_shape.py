"""A second floor for one click: the step page's fragment element for element, with no model and no app code.

    streamlit run bench/bare_step_shape.py

``bench/bare_page.py`` is the first floor (a button, a strip, a metric, a 15-bar chart: 5 elements).
The step page's Next token click redraws about 36 (``bench/click_cost.py`` counts both). This page draws the
same kinds in the same nesting as the step page's ``stepper`` fragment after a click: a row of two columns (five
buttons, a number box and a components-v2 element; a folded expander), the token strip, four tabs whose open one
holds a two-series 16-bar chart, a caption, an HTML snippet, a toggle and a folded expander, then two captions,
five metrics with help and the top-N slider. Each click appends a pseudo-random word; every value is fresh. It is
written plainly (``go.Figure`` with ``go.Bar``), as any page would be.

So a click's server CPU splits into what Streamlit charges for the elements the step page shows (this page) and
what the app adds on top (the engine's sampling, the app's own code): the step page's figure read against both
floors says which part a cut could still reach.
"""
import html
import random

import plotly.graph_objects as go
import streamlit as st

WORDS = ["the", " cat", " sat", " on", " mat", ",", " and", " a", " dog", " ran", " away", ".", " It", " was", " late"]
TABS = ["This step's distribution", "Force the next token", "The chain rule, running", "History"]
BARS = 15


def next_token() -> None:
    st.session_state.setdefault("tokens", []).append(random.choice(WORDS))


@st.cache_resource
def _counter():
    """A components-v2 element in the row, as the step row's press counter is (it draws nothing here)."""
    return st.components.v2.component("bare_press_counter", html="<span></span>")


def button_row() -> None:
    left, right = st.columns([3, 1], vertical_alignment="top")
    with right:
        st.expander("Predict, then check", key="bare_predict")
    row = left.container(key="bare_row", horizontal=True, vertical_alignment="bottom", gap="small")
    row.button("Next token", key="bare_next", type="primary", on_click=next_token, help="One decode step.")
    n = row.number_input("N", min_value=1, max_value=200, value=10, key="bare_n", width=130)
    row.button(f"Generate {n}", key="bare_generate", help="N decode steps in a row.")
    row.button("Undo", key="bare_undo", help="Drop the last token.")
    row.button("Reset", key="bare_reset", help="Back to the prompt alone.")
    with left:
        _counter()(key="bare_presses", data={"applied": len(st.session_state.get("tokens", []))})


def chart(tokens: list[str], top_n: int) -> go.Figure:
    rng = random.Random(len(tokens))
    before = sorted((rng.random() for _ in range(top_n)), reverse=True)
    after = [p * 1.2 for p in before]
    labels = [f"#{i}" for i in range(top_n)] + ["(others)"]
    fig = go.Figure([go.Bar(x=labels, y=[*before, 0.1], customdata=list(range(top_n + 1)), name="before"),
                     go.Bar(x=labels, y=[*after, 0.05], customdata=list(range(top_n + 1)), name="after")])
    fig.update_layout(barmode="group", height=380, title=f"Step {len(tokens)}", xaxis={"type": "category"})
    return fig


@st.fragment
def stepper() -> None:
    button_row()
    tokens = st.session_state.get("tokens", [])
    chips = "".join(f'<span class="tok gen" title="position {i}">{html.escape(t)}</span>'
                    for i, t in enumerate(tokens))
    st.markdown(f'<div class="tokstrip">{chips}</div>', unsafe_allow_html=True)
    view = st.container()  # the step's picture right under the strip, as on the step page
    st.caption(f"{len(tokens)} generated tokens · hover a token for its probability")
    row = st.container(horizontal=True)
    for label in ("Generated tokens", "Sequence log-prob", "Perplexity", "Entropy of this step", "Last step"):
        row.metric(label, f"{random.random() * 10:.2f}", help=f"What {label.lower()} means.")
    st.caption(f"This step's forward pass: {random.randint(40, 90)} ms.")
    top_n = st.slider("Bars to show (top-N)", 3, 50, BARS, key="bare_top_n")
    with view:
        for tab in st.tabs(TABS, key="bare_view", on_change="rerun"):
            if tab.open:
                with tab:
                    box = st.container()
                    box.plotly_chart(chart(tokens, top_n), key="bare_chart")
                    box.caption("p is its probability in the softmax.")
                    box.html('<div class="export"><button type="button">PNG</button></div>')
                    box.toggle("Numbers as a table", key="bare_table")
                    with st.container():
                        st.expander("Notice · Try · Ask").markdown("**Notice:** the pale bars are before the filters.")


st.title("Bare page, the step page's elements")
stepper()
