"""Streamlit glue shared by every page: the shared model, the per-tab session, the sidebar."""
