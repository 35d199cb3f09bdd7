"""The ``st.session_state`` keys of the attention lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
ATT_LINK_SEEN = "att_link_seen"  # the ?layer=&head= link last applied
ATT_LAYER = "att_layer"
ATT_HEAD = "att_head"
ATT_PRESET = "att_preset"
ATT_SEQ = "att_seq"
ATT_BATCH = "att_batch"
ATT_PRECISION = "att_precision"  # the calculator's weight precision
ATT_CACHE_PRECISION = "att_cache_precision"
ATT_STEP = "att"  # prefix of the page's step buttons (att_next, att_undo, att_reset)
ATT_ALL_HEADS = "att_all_heads"
ATT_BACKFILL = "att_backfill"  # prefix of the backfill buttons (one per place that offers it)
ATT_BAR_CHART = "att_bar"
ATT_HEADS_CHART = "att_heads"
ATT_TRIANGLE_CHART = "att_triangle"
ATT_GQA_CHART = "att_gqa"
ATT_GROWTH_CHART = "att_cache_growth"
ATT_SHAPES_TABLE = "att_shapes"
ATT_RECOMPUTE = "att_recompute"  # the button that recomputes the cache from scratch
ATT_RECOMPUTE_TABLE = "att_recompute_table"
ATT_MEMORY_CHART = "att_memory"
ATT_PHASE_CHART = "att_phase"
ATT_SECTION = "att_section"  # which of the page's sections is open (only the open one is drawn)
