"""The ``st.session_state`` keys of the under the hood lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
from autoreg_ui.keys import JobKeys

HOOD_PAGE = "hood"  # the page's name: its step buttons, its questions
HOOD_SECTION = "hood_section"  # the open tab
HOOD_LOSS = JobKeys("hood_loss")  # kept: the text's loss terms (its table: HOOD_LOSS.table)
HOOD_LOSS_FIG = "hood_loss_fig"
HOOD_POSITIONS_TABLE = "hood_positions_table"
HOOD_ANGLE_POS = "hood_angle_pos"
HOOD_ANGLE_FIG = "hood_angle_fig"
HOOD_KEY_POS = "hood_key_pos"
HOOD_KEY_LAYER = "hood_key_layer"
HOOD_KEY = JobKeys("hood_key")  # kept: a cached key beside the recomputed one
HOOD_KEY_FIG = "hood_key_fig"
HOOD_SHIFT = JobKeys("hood_shift")  # kept: the last step with its positions shifted
HOOD_PAD = JobKeys("hood_pad")  # kept: this text left-padded beside a longer one
HOOD_BATCH = JobKeys("hood_batch")  # kept: the last step alone and in shared passes
HOOD_BATCH_FIG = "hood_batch_fig"
HOOD_SEARCH = JobKeys("hood_search")  # kept: the bounded search for a flipped greedy token
