"""The ``st.session_state`` keys of the glossary page (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
GLOSSARY_FIND = "glossary_find"  # the box that narrows the list of terms
