"""The step row's press log: every press not yet applied runs once, in order, whatever the reruns merged."""
from autoreg_ui.step_row import presses

EPOCH = "e1"


def _log(*kinds: str, start: int = 1, epoch: str = EPOCH) -> dict:
    return {"epoch": epoch, "seq": start + len(kinds) - 1,
            "presses": [[start + i, kind] for i, kind in enumerate(kinds)]}


def test_only_the_presses_after_the_applied_count_are_new():
    log = _log("next", "next", "undo", "next")
    assert presses.new_presses(log, EPOCH, 0) == (["next", "next", "undo", "next"], 4)
    assert presses.new_presses(log, EPOCH, 2) == (["undo", "next"], 4)
    assert presses.new_presses(log, EPOCH, 3) == (["next"], 4)
    assert presses.new_presses(log, EPOCH, 4) == ([], 4)  # a rerun carrying the same log applies nothing


def test_a_log_from_another_session_or_malformed_runs_nothing():
    assert presses.new_presses(_log("next", epoch="old"), EPOCH, 0) == ([], 0)
    assert presses.new_presses(None, EPOCH, 3) == ([], 3)
    assert presses.new_presses({"epoch": EPOCH, "presses": "next"}, EPOCH, 0) == ([], 0)
    made_up = {"epoch": EPOCH, "presses": [[1, "reset"], [1, "next"], [True, "next"], ["2", "undo"], [2, "undo"]]}
    assert presses.new_presses(made_up, EPOCH, 0) == (["next", "undo"], 2)


def test_a_gap_in_the_numbers_stops_at_the_gap():
    """A log trimmed past what was applied (more presses than it keeps) runs none it cannot place in order."""
    log = _log("next", "next", start=6)
    assert presses.new_presses(log, EPOCH, 4) == ([], 4)
    assert presses.new_presses(log, EPOCH, 5) == (["next", "next"], 7)


def test_apply_runs_each_press_once_in_order():
    state = {"row__epoch": EPOCH}
    ran: list[str] = []
    actions = {"next": lambda: ran.append("n"), "undo": lambda: ran.append("u")}
    assert presses.apply(state, "row", _log("next", "undo"), actions) == 2
    assert presses.apply(state, "row", _log("next", "undo", "next"), actions) == 1  # a merged rerun's longer log
    assert presses.apply(state, "row", _log("next", "undo", "next"), actions) == 0  # the same log again
    assert ran == ["n", "u", "n"] and state[presses.applied_key("row")] == 3
