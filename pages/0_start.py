"""Start here: what the app teaches and two lesson paths, each stop a link that opens a ready page."""
import streamlit as st

from autoreg_ui import start_text as text

st.title(text.TITLE)
st.markdown(text.WHAT)
st.markdown(text.HOW)
st.header(text.PATHS_TITLE)
for column, (name, path) in zip(st.columns(len(text.PATHS)), text.PATHS.items()):
    column.subheader(f"{name} ({text.path_minutes(path)} min)")
    column.markdown("\n".join(text.stop_markdown(i, stop) for i, stop in enumerate(path, 1)))
