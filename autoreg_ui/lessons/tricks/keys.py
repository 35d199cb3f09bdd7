"""The ``st.session_state`` keys of the more serving tricks lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
from autoreg_ui.keys import JobKeys

TRICKS_PAGE = "tricks"
TRICKS_WHATIF_ALPHA = "tricks_whatif_alpha"
TRICKS_WHATIF_C = "tricks_whatif_c"
TRICKS_WHATIF_FIG = "tricks_whatif_fig"
TRICKS_SPEC = JobKeys("tricks_spec")  # kept: plain vs both drafts, read as α, c, v and speed-ups
TRICKS_SPEC_K = "tricks_spec_k"
TRICKS_SPEC_MAX_NEW = "tricks_spec_max_new"
TRICKS_SPEC_FIG = "tricks_spec_fig"  # the measured drafts' speed-up curves, under the button
TRICKS_SPEC_BARS = "tricks_spec_bars"
TRICKS_PREFIX = JobKeys("tricks_prefix")  # kept: the many-tabs demonstration
TRICKS_PREFIX_TABS = "tricks_prefix_tabs"
TRICKS_PREFIX_FIG = "tricks_prefix_fig"
TRICKS_GRAMMAR = JobKeys("tricks_grammar")  # kept: constrained and unconstrained runs
TRICKS_GRAMMAR_KIND = "tricks_grammar_kind"
TRICKS_GRAMMAR_SOURCE = "tricks_grammar_source"  # prefix: one text box per kind
TRICKS_GRAMMAR_PROMPT = "tricks_grammar_prompt"  # prefix: one prompt per kind
TRICKS_GRAMMAR_MAX_NEW = "tricks_grammar_max_new"
TRICKS_GRAMMAR_FIG = "tricks_grammar_fig"
TRICKS_GRAMMAR_STEPS = "tricks_grammar_steps"
