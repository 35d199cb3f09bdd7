"""The ``st.session_state`` keys of the inside generation lesson (widget keys included), read by this lesson alone.

A key is where Streamlit keeps a widget's value or a result; links, session files and tests see these
strings, so they never change. Keys that several pages read live in ``autoreg_ui.keys``.
"""
from autoreg_ui.keys import JobKeys

INSIDE_PAGE = "inside"  # prefix of the shared step buttons' keys on this page
INSIDE_FORCE_RANK = "inside_force_rank"
INSIDE_FORCE = "inside_force"
INSIDE_TEACHER = JobKeys("inside_teacher")  # kept: the teacher-forced scoring of this tab's text
INSIDE_TEACHER_FIG = "inside_teacher_fig"
INSIDE_TEACHER_ROWS = "inside_teacher_rows"
INSIDE_LENS_STEP = "inside_lens_step"
INSIDE_LENS = JobKeys("inside_lens")  # kept: the last logit-lens reading
INSIDE_LENS_TARGET_FIG = "inside_lens_target_fig"
INSIDE_LENS_GRID_FIG = "inside_lens_grid_fig"
INSIDE_PROMPT_CHOICE = "inside_prompt_choice"
INSIDE_PHASE_NEW = "inside_phase_new"
INSIDE_PHASES = JobKeys("inside_phases")  # kept: TTFT and tokens/s of the last measured run
INSIDE_SWEEP = JobKeys("inside_sweep")  # kept: the prefill sweep (points arrive while it runs)
INSIDE_SWEEP_FIG = "inside_sweep_fig"
INSIDE_WORKED_COUNTS = "inside_worked_counts"
INSIDE_EXAMPLE = JobKeys("inside_example")  # kept: the measured 50 + 100 worked example
INSIDE_WINDOW_SIZE = "inside_window_size"
INSIDE_WINDOW = JobKeys("inside_window")  # kept: the full vs sliding-window comparison
INSIDE_WINDOW_FIG = "inside_window_fig"
INSIDE_TOY_SCORES = "inside_toy_scores"
INSIDE_TOY_START = "inside_toy_start"
INSIDE_TOY_TEMPERATURE = "inside_toy_temperature"
INSIDE_TOY_SEED = "inside_toy_seed"
INSIDE_TOY_TRACE = "inside_toy_trace"
INSIDE_UNEMBED_TABLE = "inside_unembed_table"
INSIDE_UNEMBED_FIG = "inside_unembed_fig"
INSIDE_UNEMBED_KEPT = "inside_unembed_kept"  # (model, text) → its W·h + b reading
