"""autoreg_ui: everything a person sees — one lesson per name (X.py, X_text.py, figures/X.py), the shared sidebar, links, measuring."""
