"""What a server process holds for every tab, apart from the model: the operator's settings (``settings``), the
seats (``seats``), the class store (``class_store``) and what the classes' tabs share in memory (``live_classes``:
the store opened, the teacher's live texts, the round prefixes). Pure Python, no Streamlit: a notebook never
imports it, and tools (``bench/``, ``deploy/``) use the store without the app."""
