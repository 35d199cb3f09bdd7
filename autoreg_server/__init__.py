"""What a server process holds for every tab, apart from the model: the operator's settings (``settings``), the
seats (``seats``) and the class store (``class_store``). Pure Python, no Streamlit: a notebook never imports it,
and tools (``bench/``, ``deploy/``) use the store without the app."""
