"""Figure builders: pure functions from engine records to plotly figures (no Streamlit)."""
