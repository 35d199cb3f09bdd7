"""The ``st.session_state`` keys of the sampling lab (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
LAB_STEP = "lab"  # prefix of the page's step buttons (lab_next, lab_undo, lab_reset)
LAB_SOURCE = "lab_source"
LAB_PROMPT = "lab_prompt"
LAB_CHAT = "lab_chat"
LAB_FROM_SIDEBAR = "lab_from_sidebar"
LAB_TEMPERATURE = "lab_temperature"
LAB_TOP_K = "lab_top_k"
LAB_TOP_P = "lab_top_p"
LAB_MIN_P = "lab_min_p"
LAB_TOP_N = "lab_top_n"
LAB_SEED = "lab_seed"
LAB_DRAW_COUNT = "lab_draw_count"  # presses of "Draw again": added to the seed
LAB_REDRAW = "lab_redraw"
LAB_N = "lab_n"
LAB_PIPELINE_CHART = "lab_pipeline_chart"
LAB_DRAW_CHART = "lab_draw_chart"
LAB_DRAWS_CHART = "lab_draws_chart"
LAB_SWEEP_CHART = "lab_sweep_chart"
LAB_VIEW = "lab_view"  # which view of section 1 is open (only the open one is drawn)
LAB_STRAT_TOP_K = "lab_strat_top_k"
LAB_STRAT_TOP_P = "lab_strat_top_p"
LAB_STRAT_MIN_P = "lab_strat_min_p"
LAB_STRATEGIES_CHART = "lab_strategies_chart"
LAB_STRATEGIES_TABLE = "lab_strategies_table"
LAB_CONT_A = "lab_cont_a"
LAB_CONT_B = "lab_cont_b"
LAB_CONT_K = "lab_cont_k"
LAB_CONT_M = "lab_cont_m"
LAB_CONT_RUN = "lab_cont_run"
LAB_CONT_RESULT = "lab_cont_result"
LAB_CONT_TABLE = "lab_cont_table"  # prefix: one table per strategy (lab_cont_table_A, _B)
LAB_BEAM_WIDTH = "lab_beam_width"
LAB_BEAM_STEPS = "lab_beam_steps"
LAB_BEAM_LP = "lab_beam_lp"
LAB_BEAM_RUN = "lab_beam_run"
LAB_BEAM_RESULT = "lab_beam_result"
LAB_BEAM_CHART = "lab_beam_chart"
LAB_BEAM_LIVE = "lab_beam_live"  # prefix: the tree redrawn after each step while the search runs
LAB_BEAM_TABLE = "lab_beam_table"
