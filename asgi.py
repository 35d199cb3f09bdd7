"""The app as an ASGI application: Streamlit's own server for ``app.py`` plus the app's own routes (the class
feed). ``python -m autoreg_ui.serve`` runs it (``streamlit run asgi.py`` with the app's settings)."""
import streamlit as st

from autoreg_ui.classroom.feed_route import lifespan, routes

app = st.App("app.py", routes=routes(), lifespan=lifespan)
