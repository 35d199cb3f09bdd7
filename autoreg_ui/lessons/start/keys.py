"""The ``st.session_state`` keys of the start page (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
PATH_BEGIN = "lesson_path_begin"  # the Start page's "Teach this path" buttons: PATH_BEGIN + path number
PATH_OPEN = "lesson_path_open"  # the Start page's stop buttons: PATH_OPEN + path number + stop number
TRY_PROMPT = "start_try_prompt"  # the "Try it now" box's prompt
TRY_NEXT = "start_try_next"  # its Next token button
