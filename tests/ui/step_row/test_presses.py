"""The step row's press log: every press not yet applied runs once, in order, whatever the reruns merged."""
from autoreg_ui.step_row import presses

EPOCH = "e1"
TEXT = object()  # the session a Generate is for


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



def _take(state, key, actions, n, have, text=TEXT) -> int:
    return presses.take_generate(state, key, actions, n, have, lambda: text)


def _row(state: dict, ran: list[str]) -> dict:
    actions = {"next": lambda: ran.append("n"), "undo": lambda: ran.append("u")}
    return {"actions": actions, "routed": presses.routed(state, "row", actions)}


def test_next_and_undo_run_at_once_until_a_generate_waits_then_everything_waits_behind_it():
    state, ran = {"row__epoch": EPOCH}, []
    row = _row(state, ran)
    assert presses.apply(state, "row", _log("next", "undo"), row["routed"]) == 2
    assert ran == ["n", "u"] and state.get(presses.queue_key("row"), []) == []
    log = _log("next", "undo", "generate", "next", "generate", "undo")
    assert presses.apply(state, "row", log, row["routed"]) == 4  # applied: queued in order, nothing lost
    assert ran == ["n", "u"] and state[presses.queue_key("row")] == ["generate", "next", "generate", "undo"]
    assert state[presses.applied_key("row")] == 6


def test_the_page_takes_one_generate_at_a_time_running_the_presses_before_it():
    state, ran = {presses.queue_key("row"): ["generate", "next", "undo", "generate", "next"]}, []
    actions = _row(state, ran)["actions"]
    assert _take(state, "row", actions, 5, have=lambda: 2) == 5 and ran == []
    assert state[presses.queue_key("row")] == ["next", "undo", "generate", "next"]
    assert presses.generating(state, "row") == 7 and presses.generating(state, "other") is None  # its goal: 2 + 5
    assert presses.target(state, TEXT) == 7
    assert presses.generate_ended(state) is True  # presses wait behind it: the page reruns for them
    assert presses.generate_ended(state) is False and presses.target(state, TEXT) is None  # once
    text = [7]  # the tokens the text has: the Next and Undo that run before this Generate change it
    actions = {"next": lambda: (ran.append("n"), text.append(text.pop() + 1)),
               "undo": lambda: (ran.append("u"), text.append(text.pop() - 1))}
    state[presses.queue_key("row")] = ["next", "next", "undo", "generate", "next"]
    assert _take(state, "row", actions, 3, have=lambda: text[0]) == 3 and ran == ["n", "n", "u"]
    assert presses.target(state, TEXT) == 11  # 7 + 1 + 1 − 1, then 3: read after the presses before it ran
    assert state[presses.queue_key("row")] == ["next"] and presses.generate_ended(state) is True
    assert _take(state, "row", actions, 3, have=lambda: 11) == 0 and ran == ["n", "n", "u", "n"]
    assert state[presses.queue_key("row")] == [] and presses.generate_ended(state) is False


def test_a_lone_generate_leaves_nothing_queued_and_asks_no_rerun():
    state = {presses.queue_key("row"): ["generate"]}
    assert _take(state, "row", _row(state, [])["actions"], 4, have=lambda: 0) == 4
    assert state[presses.queue_key("row")] == [] and presses.generate_ended(state) is False
    assert _take(state, "row", _row(state, [])["actions"], 4, have=lambda: 4) == 0  # empty queue: none


def test_a_generate_cut_short_by_a_press_goes_on_to_its_goal_and_the_press_waits_behind_it():
    state, ran = {"row__epoch": EPOCH, presses.queue_key("row"): ["generate"]}, []
    row = _row(state, ran)
    assert _take(state, "row", row["actions"], 10, have=lambda: 0) == 10
    # three steps ran, then a press of N reran the page mid-Generate
    assert presses.apply(state, "row", _log("next"), row["routed"]) == 1
    assert ran == [] and state[presses.queue_key("row")] == ["next"]  # it waits: the Generate came first
    assert _take(state, "row", row["actions"], 10, have=lambda: 3) == 7 and ran == []  # to 10, not 13
    assert _take(state, "row", row["actions"], 10, have=lambda: 9) == 1  # both sides of the goal
    assert _take(state, "row", row["actions"], 10, have=lambda: 10) == 0 and ran == ["n"]
    assert presses.target(state, TEXT) is None and state[presses.queue_key("row")] == []


def test_a_generate_of_a_page_left_behind_is_dropped_and_reset_drops_everything_waiting():
    state = {presses.queue_key("row"): ["generate", "next"]}
    assert _take(state, "row", {}, 6, have=lambda: 0) == 6
    assert _take(state, "other", {}, 6, have=lambda: 2) == 0
    assert presses.generating(state, "row") is None
    assert state[presses.queue_key("row")] == []  # the press queued behind it went with it
    state[presses.queue_key("row")] = ["generate", "next"]
    assert _take(state, "row", {}, 6, have=lambda: 2) == 6
    presses.drop_waiting(state)
    assert presses.generating(state, "row") is None and state[presses.queue_key("row")] == []
    assert _take(state, "row", {}, 6, have=lambda: 2) == 0


def test_a_generate_of_a_text_since_replaced_is_dropped_and_the_presses_behind_it_run_on_the_new_text():
    state, ran = {presses.queue_key("row"): ["generate"]}, []
    actions = _row(state, ran)["actions"]
    assert _take(state, "row", actions, 8, have=lambda: 0) == 8
    state[presses.queue_key("row")] = ["next"]  # pressed after a new prompt, while the old goal was still held
    new_text = object()
    assert presses.target(state, new_text) is None and presses.target(state, TEXT) == 8
    assert _take(state, "row", actions, 8, have=lambda: 0, text=new_text) == 0  # no Generate toward the old goal
    assert ran == ["n"] and presses.target(state, new_text) is None and presses.target(state, TEXT) is None
