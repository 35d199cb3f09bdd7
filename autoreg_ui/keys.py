"""Every ``st.session_state`` key the app uses, in one place (widget keys included).

A widget's key is where Streamlit keeps its value; durable copies (``*_KEPT``) survive a visit to a
page that does not draw the widget. Keep the names sorted by page; never spell a key inline.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class JobKeys:
    """The keys of one job a button runs: where its result is kept, its Run and Stop buttons, its table.

    ``JobKeys("srv_batch")`` keeps its result under ``"srv_batch"``; its buttons and table are
    ``"srv_batch_run"``, ``"srv_batch_stop"`` and ``"srv_batch_table"`` (links and tests may name them).
    """

    kept: str

    @property
    def run(self) -> str:
        return f"{self.kept}_run"

    @property
    def stop(self) -> str:
        return f"{self.kept}_stop"

    @property
    def table(self) -> str:
        return f"{self.kept}_table"


# ---------------------------------------------------------------- shared by every page
MODEL = "model_name"
CONFIG = "sampling_config"  # the normalised SamplingConfig from the sidebar
SESSION = "session"  # this tab's Session
MESSAGES = "messages"  # one channel for warnings shown at the next redraw: list of (level, text)
MODEL_LINK_SEEN = "model_link_seen"
MODEL_LINK_ERROR = "model_link_error"
CLASS_FULL_RETRY = "class_full_retry"  # the "Try again" button of the class-is-full page (limits.gate)

# sidebar widgets
CFG_TEMPERATURE = "cfg_temperature"
CFG_TOP_K = "cfg_top_k"
CFG_TOP_P = "cfg_top_p"
CFG_MIN_P = "cfg_min_p"
CFG_REPETITION = "cfg_rep"
CFG_SEED = "cfg_seed"
CFG_MAX_NEW = "cfg_max_new"
CFG_STOPS = "cfg_stops"

# teacher's tools: links, presenter mode, export (every page)
LINK_SEEN = "link_seen"  # the link parameters last applied or written: a link is read once
LINK_OTHERS_SEEN = "link_others_seen"  # the other parameters whose messages were shown
LINK_PENDING = "link_pending"  # a recipe (from a link) or a session file waiting to be replayed
PRESENT = "present"  # presenter mode toggle
PRESENT_SEEN = "present_seen"  # the ?present= value last applied
THEME_RELOAD = "theme_reload"  # presenter mode changed: reload once in the matching theme
SAVE_SESSION = "save_session"
LOAD_SESSION = "load_session"
HANDOUT = "handout"
HANDOUT_CHARTS = "handout_charts"  # the charts this tab showed, newest last: key → (page, title, figure)

# ---------------------------------------------------------------- step page
PROMPT_KEPT = "prompt_text"
CHAT_KEPT = "chat_mode"
PROMPT_BOX = "prompt_box"
CHAT_BOX = "chat_box"
EXAMPLE_BOX = "example_box"
APPLY_PROMPT = "apply_prompt"
GENERATE_N = "gen_n"
TOP_N = "top_n"
FORCE_TEXT = "force_text"
FORCE_BUTTON = "force"
HISTORY = "history"
HISTORY_CSV = "csv"
STEP_VIEW = "step_view"  # which of the step page's views is open (only the open one is drawn)
STEP_LAST_CHART = "last_chart"
STEP_CHAIN_CHART = "logprob_chart"

# ---------------------------------------------------------------- attention page
ATT_LINK_SEEN = "att_link_seen"
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

# ---------------------------------------------------------------- sampling lab
LAB_STEP = "lab"  # prefix of the page's step buttons (lab_next, lab_undo, lab_reset)
KEPT_SUFFIX = "__kept"  # suffix of a widget's durable copy across pages (lab_temperature__kept ...)
VIEW_LINK_SEEN_SUFFIX = "__link_seen"  # the ?view= link a page's tabs last applied
TABLE_SUFFIX = "__table"  # suffix of the toggle under a chart that shows its numbers as a table
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

# ---------------------------------------------------------------- naive vs KV cache
COST_PAGE = "cost"  # prefix of the shared step buttons' keys on this page
COST_MAX_LEN = "cost_max_len"
COST_RACE = "cost_race"  # the race controller's state
COST_ROOFS = "cost_roofs"  # "Measure the machine again" button
COST_RUN = "cost_run"
COST_STOP = "cost_stop"
COST_RESUME = "cost_resume"
COST_CLEAR = "cost_clear"
COST_T = "cost_T"  # tokens to generate in the count table
COST_TABLE = "cost_table"
COST_COUNTS = "cost_counts"
COST_CSV = "cost_csv"
COST_LIVE_CHART = "cost_live"  # prefix: one key per redraw while the race runs
COST_FIG_STEP = "cost_fig_step"
COST_FIG_TOTAL = "cost_fig_cum"
COST_FIG_SPEEDUP = "cost_fig_speedup"
COST_FIG_THEORY = "cost_fig_theory"
COST_FIG_BYTES = "cost_fig_bytes"
COST_FIG_ROOFLINE = "cost_fig_roofline"

# ---------------------------------------------------------------- inside generation (in the page's order)
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

# ---------------------------------------------------------------- how servers go fast
SRV_PAGE = "srv"  # prefix of the shared step buttons' keys on this page
SRV_LIVE_REFRESH = "srv_live_refresh"  # the live panel's "Update every 5 s" switch
SRV_LIVE_CHART = "srv_live_chart"
SRV_CHART = "srv_chart"  # prefix of every chart on the page (one suffix per chart)
SRV_BATCH_MAX = "srv_batch_max"
SRV_BATCH = JobKeys("srv_batch")  # kept: the batching sweep (points arrive while it runs)
SRV_QUEUE_REQUESTS = "srv_queue_requests"
SRV_QUEUE_SLOTS = "srv_queue_slots"
SRV_QUEUE_LONGEST = "srv_queue_longest"
SRV_QUEUE = JobKeys("srv_queue")  # kept: static and continuous runs of the same queue
SRV_REQUEST_TABLE = "srv_request_table"
SRV_SPEC_DRAFTS = "srv_spec_drafts"
SRV_SPEC_LAYERS = "srv_spec_layers"
SRV_SPEC_K = "srv_spec_k"
SRV_SPEC_MAX_NEW = "srv_spec_max_new"
SRV_SPEC_SAMPLING = "srv_spec_sampling"
SRV_SPEC = JobKeys("srv_spec")  # kept: plain vs speculative runs on the two prompts
SRV_SPEC_ROUNDS = "srv_spec_rounds"  # prefix: one rounds table/chart per prompt and draft
SRV_PREC = JobKeys("srv_prec")  # kept: the precision table
SRV_DIAL_GROUPING = "srv_dial_grouping"
SRV_DIAL = JobKeys("srv_dial")  # kept: one dial curve per grouping, under f"{SRV_DIAL.kept}_{grouping}"

# ---------------------------------------------------------------- tokens page
TOKENS_TEXT = "tokens_text"  # the text box
TOKENS_TABLE = "tokens_table"
TOKENS_CHART = "tokens_scripts_chart"
TOKENS_SCRIPTS_TABLE = "tokens_scripts_table"
TOKENS_VOCABS_TABLE = "tokens_vocabs_table"


# ---------------------------------------------------------------- glossary page
GLOSSARY_FIND = "glossary_find"  # the box that narrows the list of terms

# ---------------------------------------------------------------- class mode (class_mode.py)
CLASS_CODE = "class_code"  # the class this tab belongs to (teacher or student)
CLASS_KEY = "class_key"  # the teacher key: only the teacher's tab holds it
CLASS_SEAT = "class_seat"  # a student's anonymous id in the class
CLASS_MODE = "class_mode"  # "following" or "exploring"
CLASS_PUBLISHED = "class_published"  # the teacher's recipe as last written to the store
CLASS_DRAWN = "class_drawn"  # the class version this tab's page last drew
CLASS_START = "class_start"
CLASS_NICK = "class_nick"
CLASS_JOIN = "class_join"
CLASS_CODE_BOX = "class_code_box"
CLASS_GUESS = "class_guess"
CLASS_GUESS_SEND = "class_guess_send"
CLASS_ASK = "class_ask"
CLASS_REVEAL = "class_reveal"
CLASS_MOVE_ON = "class_move_on"
CLASS_END = "class_end"
CLASS_NAMES = "class_names"
CLASS_BOARD = "class_board"
CLASS_EXPLORE = "class_explore"
CLASS_FOLLOW = "class_follow"
CLASS_REMOVE_WHO = "class_remove_who"
CLASS_REMOVE = "class_remove"
CLASS_LEAVE = "class_leave"
CLASS_SOURCE = "class_source"  # this tab's id for the rate limits when the client's address is unknown
CLASS_KEY_REFUSED = "class_key_refused"  # a teacher key from the address that the class refused (said once)
CLASS_SAMPLE = "class_sample"
CLASS_SAMPLE_CLOSE = "class_sample_close"
CLASS_SAMPLE_TOKENS = "class_sample_tokens"
CLASS_SAMPLE_TEMPERATURE = "class_sample_temperature"
CLASS_SAMPLE_SHOWN = "class_sample_shown"  # the sampling round whose tree the teacher's page shows


# ---------------------------------------------------------------- under the hood (pages/10_hood.py, lessons/hood)
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

# ---------------------------------------------------------------- tricks page (issue 29: speculation's arithmetic,
# prefix caching, constrained decoding)
TRICKS_PAGE = "tricks"
TRICKS_WHATIF_ALPHA = "tricks_whatif_alpha"
TRICKS_WHATIF_C = "tricks_whatif_c"
TRICKS_WHATIF_FIG = "tricks_whatif_fig"
TRICKS_SPEC = JobKeys("tricks_spec")  # kept: plain vs both drafts, read as α, c, v and speed-ups
TRICKS_SPEC_K = "tricks_spec_k"
TRICKS_SPEC_MAX_NEW = "tricks_spec_max_new"
TRICKS_SPEC_FIG = "tricks_spec_fig"
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

# ---------------------------------------------------------------- a lesson path (lesson_path.py)
PATH = "lesson_path"  # the path this tab follows: a tuple of lesson_path.PathStop, or absent
PATH_AT = "lesson_path_at"  # the index of the stop the tab is at
PATH_LEFT = "lesson_path_left"  # stop index → the link of that stop as the teacher left it
PATH_PREVIOUS = "lesson_path_previous"  # the bar's buttons
PATH_NEXT = "lesson_path_next"
PATH_LEAVE = "lesson_path_leave"
PATH_BEGIN = "lesson_path_begin"  # the Start page's "Teach this path" buttons: PATH_BEGIN + path number
PATH_OPEN = "lesson_path_open"  # the Start page's stop buttons: PATH_OPEN + path number + stop number
PREDICT_BOX = "predict_box"  # the predict-then-check box's open state: PREDICT_BOX + page
