"""The package exports every public name of the store, and ClassStore is the three kinds of access over one
core."""
import importlib

import autoreg_server.class_store as store
from autoreg_server.class_store import ClassStore, StoreCore
from autoreg_server.class_store.reads import ClassReads
from autoreg_server.class_store.seats import SeatActions
from autoreg_server.class_store.teacher import TeacherActions

# Every public name of the module before the split.
BEFORE = """ENV_DB ENV_HOURS ENV_REPLICA_TAG ALPHABET CODE_LENGTH NICKNAME_MAX GUESS_MAX MAX_STUDENTS MAX_CLASSES
DEFAULT_HOURS JOIN_FAILS_PER_MINUTE ALL_JOIN_FAILS_PER_MINUTE KEY_FAILS_PER_MINUTE EVERYONE GUESSES_PER_MINUTE
MAX_QUESTIONS MAX_ROUNDS MAX_DRAW_TOKENS MAX_CONTEXT MODES SCHEMA ClassError NotTeacher RateLimited ClassInfo
Student Guess Question Round Draw replica_tag new_code normal_code clean_nickname default_path class_hours
ClassStore main""".split()


def test_every_name_the_single_module_had_is_still_exported():
    assert not [name for name in BEFORE if not hasattr(store, name)]
    assert set(BEFORE) <= set(store.__all__)
    assert all(hasattr(store, name) for name in store.__all__)


def test_the_limits_are_the_same_as_before():
    assert (store.MAX_STUDENTS, store.MAX_CLASSES, store.DEFAULT_HOURS) == (60, 50, 6.0)
    assert (store.JOIN_FAILS_PER_MINUTE, store.ALL_JOIN_FAILS_PER_MINUTE, store.KEY_FAILS_PER_MINUTE,
            store.GUESSES_PER_MINUTE) == (20, 300, 5, 20)
    assert (store.MAX_QUESTIONS, store.MAX_ROUNDS, store.MAX_DRAW_TOKENS, store.MAX_CONTEXT) == (200, 100, 12, 8192)
    assert (store.NICKNAME_MAX, store.GUESS_MAX, store.CODE_LENGTH) == (24, 40, 6)


def test_class_store_is_composed_over_one_core():
    assert ClassStore.__mro__[1:4] == (TeacherActions, SeatActions, ClassReads)
    assert all(issubclass(part, StoreCore) for part in (TeacherActions, SeatActions, ClassReads))
    assert ClassStore.__init__ is StoreCore.__init__


def test_importing_dunder_main_does_not_run_the_command_line():
    module = importlib.import_module("autoreg_server.class_store.__main__")
    assert module.main is store.main
