"""The ``st.session_state`` keys of the step lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
TOP_N = "top_n"
FORCE_TEXT = "force_text"
FORCE_BUTTON = "force"
HISTORY = "history"
HISTORY_CSV = "csv"
STEP_VIEW = "step_view"  # which of the step page's views is open (only the open one is drawn)
STEP_LAST_CHART = "last_chart"
STEP_CHAIN_CHART = "logprob_chart"
