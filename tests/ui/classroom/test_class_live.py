"""What a class's tabs share in the process: roles read from the tab's state, leaving, the kept round prefixes."""
from autoreg_server import live_classes
from autoreg_server.once import Once
from autoreg_ui import keys
from autoreg_ui.classroom import live as class_live


def test_roles_come_from_the_tabs_state():
    teacher = {keys.CLASS_CODE: "ABC234", keys.CLASS_KEY: "k"}
    following = {keys.CLASS_CODE: "ABC234", keys.CLASS_SEAT: "s"}
    exploring = {**following, keys.CLASS_MODE: "exploring"}
    assert class_live.is_teacher(teacher) and not class_live.is_student(teacher)
    assert class_live.is_follower(following) and class_live.is_student(exploring)
    assert not class_live.is_follower(exploring) and not class_live.is_teacher({keys.CLASS_KEY: "k"})


def test_leaving_forgets_the_class_in_state_and_address():
    state = {keys.CLASS_CODE: "ABC234", keys.CLASS_SEAT: "s", keys.CLASS_DRAWN: 3, "other": 1}
    query = {"class": "ABC234", "seat": "s", "prompt": "Hi"}
    class_live.leave(state, query)
    assert state == {"other": 1} and query == {"prompt": "Hi"}


def test_round_prefixes_are_bounded_newest_kept(monkeypatch):
    live = live_classes.LiveClasses()
    monkeypatch.setattr(live_classes, "_shared", Once(lambda: live))
    for rid in range(live_classes.KEPT_PREFIXES + 3):
        class_live.keep_prefix(rid, f"prefix {rid}")
    assert live.kept_rounds() == list(range(3, live_classes.KEPT_PREFIXES + 3))
    class_live.keep_prefix(3, "again")  # kept again: newest now
    assert live.kept_rounds()[-1] == 3 and len(live.kept_rounds()) == live_classes.KEPT_PREFIXES
    assert live.prefix(3) == "again" and live.prefix(0) is None


def test_a_class_that_ended_drops_its_live_text(monkeypatch):
    live = live_classes.LiveClasses()
    monkeypatch.setattr(live_classes, "_shared", Once(lambda: live))
    live.set_text("ABC234", {}, None)
    live.set_text("XYZ789", {}, None)
    class_live.forget("ABC234")
    assert live.text("ABC234") is None and live.text("XYZ789") == ({}, None)


def test_the_client_address_comes_from_a_trusted_proxy_only():
    trusted = {"10.0.0.5", "127.0.0.1"}
    address = class_live.client_address
    # a direct connection: its own address, whatever X-Forwarded-For it sends
    assert address("203.0.113.7", ["1.2.3.4"], trusted) == "203.0.113.7"
    assert address("203.0.113.7", [], set()) == "203.0.113.7"
    # the operator's balancer: the address it forwarded for (the last hop not itself a trusted proxy)
    assert address("10.0.0.5", ["198.51.100.9"], trusted) == "198.51.100.9"
    assert address("10.0.0.5", ["6.6.6.6, 198.51.100.9"], trusted) == "198.51.100.9"  # a forged first hop is ignored
    assert address("10.0.0.5", ["198.51.100.9, 127.0.0.1"], trusted) == "198.51.100.9"  # two proxies in a row
    assert address("10.0.0.5", [], trusted) == "10.0.0.5"  # a proxy that forwarded nothing
    assert address("10.0.0.5", ["198.51.100.9"], set()) == "10.0.0.5"  # not named: the proxy's own address
    assert address(None, ["198.51.100.9"], trusted) is None  # no connection (AppTest): the tab's own id is used


def test_trusted_proxies_are_named_by_the_operator(monkeypatch):
    assert class_live.trusted_proxies() == set()
    monkeypatch.setenv("AUTOREG_TRUSTED_PROXIES", " 10.0.0.5 ,127.0.0.1,")
    assert class_live.trusted_proxies() == {"10.0.0.5", "127.0.0.1"}



def test_a_teachers_text_is_read_again_only_when_the_session_or_the_settings_changed(tiny, monkeypatch):
    from dataclasses import replace

    from autoreg_core import Session
    from autoreg_ui.settings import SIDEBAR_DEFAULTS

    read = []
    real = class_live._mine
    monkeypatch.setattr(class_live, "_mine", lambda session, config: read.append(1) or real(session, config))
    state, session, config = {}, Session(tiny, "The cat sat on"), SIDEBAR_DEFAULTS
    first = class_live._mine_now(state, session, config)
    assert class_live._mine_now(state, session, config) == first and len(read) == 1  # nothing changed: no snapshot
    moves = [lambda s, c: (s.prefill(), c)[1], lambda s, c: (s.step(c), c)[1], lambda s, c: (s.undo(), c)[1],
             lambda s, c: replace(c, temperature=0.3), lambda s, c: (s.reset(), c)[1]]
    for move in moves:
        before = len(read)
        config = move(session, config)
        mine = class_live._mine_now(state, session, config)
        assert mine == real(session, config) and len(read) == before + 1
    other = Session(tiny, "Another text")  # a new session (a new prompt, the class's text loaded) at any version
    assert class_live._mine_now(state, other, config) == real(other, config)
