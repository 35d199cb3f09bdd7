"""The ``st.session_state`` keys of the tokens lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
TOKENS_TEXT = "tokens_text"  # the text box
TOKENS_TABLE = "tokens_table"
TOKENS_CHART = "tokens_scripts_chart"
TOKENS_SCRIPTS_TABLE = "tokens_scripts_table"
TOKENS_VOCABS_TABLE = "tokens_vocabs_table"
