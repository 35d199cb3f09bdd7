"""The ``st.session_state`` keys of the naive vs KV cache lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
COST_PAGE = "cost"  # prefix of the shared step buttons' keys on this page
COST_MAX_LEN = "cost_max_len"
COST_RACE = "cost_race"  # the race controller's state
COST_ROOFS = "cost_roofs"  # "Measure the machine again" button
COST_RUN = "cost_run"
COST_STOP = "cost_stop"
COST_RESUME = "cost_resume"
COST_CLEAR = "cost_clear"
COST_T = "cost_T"  # tokens to generate in the count table
COST_TABLE = "cost_table"
COST_COUNTS = "cost_counts"
COST_CSV = "cost_csv"
COST_LIVE_CHART = "cost_live"  # prefix: one key per redraw while the race runs
COST_FIG_STEP = "cost_fig_step"
COST_FIG_TOTAL = "cost_fig_cum"
COST_FIG_SPEEDUP = "cost_fig_speedup"
COST_FIG_THEORY = "cost_fig_theory"
COST_FIG_BYTES = "cost_fig_bytes"
COST_FIG_ROOFLINE = "cost_fig_roofline"
