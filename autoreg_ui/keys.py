"""The ``st.session_state`` keys that several pages share (widget keys included).

A widget's key is where Streamlit keeps its value; durable copies (``*_KEPT``) survive a visit to a
page that does not draw the widget. A key that one lesson alone reads lives in that lesson's own
``keys.py`` (``autoreg_ui/lessons/<lesson>/keys.py``); never spell a key inline.
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
LINK_EXPECTED = "link_expected"  # the app opens an address of its own as a link in the next run (a path's stop)
PRESENT = "present"  # presenter mode toggle
PRESENT_SEEN = "present_seen"  # the ?present= value last applied
THEME_RELOAD = "theme_reload"  # presenter mode changed: reload once in the matching theme
SAVE_SESSION = "save_session"
LOAD_SESSION = "load_session"
HANDOUT = "handout"
HANDOUT_CHARTS = "handout_charts"  # the charts this tab showed, newest last: key → (page, title, figure)

# ---------------------------------------------------------------- the prompt (step page, class, links)
PROMPT_KEPT = "prompt_text"
CHAT_KEPT = "chat_mode"
PROMPT_BOX = "prompt_box"
CHAT_BOX = "chat_box"
EXAMPLE_BOX = "example_box"
APPLY_PROMPT = "apply_prompt"
GENERATE_N = "gen_n"

# ---------------------------------------------------------------- suffixes of derived keys
KEPT_SUFFIX = "__kept"  # suffix of a widget's durable copy across pages (lab_temperature__kept ...)
VIEW_LINK_SEEN_SUFFIX = "__link_seen"  # the ?view= link a page's tabs last applied
TABLE_SUFFIX = "__table"  # suffix of the toggle under a chart that shows its numbers as a table

# ---------------------------------------------------------------- class mode (classroom/)
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

# ---------------------------------------------------------------- a lesson path (lesson_path.py)
PATH = "lesson_path"  # the path this tab follows: a tuple of lesson_path.PathStop, or absent
PATH_AT = "lesson_path_at"  # the index of the stop the tab is at
PATH_LEFT = "lesson_path_left"  # stop index → the link of that stop as the teacher left it
PATH_PREVIOUS = "lesson_path_previous"  # the bar's buttons
PATH_NEXT = "lesson_path_next"
PATH_LEAVE = "lesson_path_leave"
PREDICT_BOX = "predict_box"  # the predict-then-check box's open state: PREDICT_BOX + page
