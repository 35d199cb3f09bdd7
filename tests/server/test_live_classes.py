"""The classes' shared state in one process: the store opened once, texts and leaders, one build at a time, the
bounds, and one instance per process."""
import threading
import time

from autoreg_server import live_classes
from autoreg_server.live_classes import LiveClasses
from autoreg_server.once import Once


def test_the_store_is_opened_once_and_again_after_a_failed_opening():
    opened = []

    def opener():
        opened.append(1)
        if len(opened) == 1:
            raise OSError("the database is not up yet")
        return object()

    live = LiveClasses(opener=opener)
    try:
        live.store()
        raise AssertionError("the failed opening was not raised")
    except OSError:
        pass
    first = live.store()
    assert live.store() is first and len(opened) == 2


def test_the_default_store_is_the_one_the_environment_names(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOREG_CLASS_DB", str(tmp_path / "here.sqlite3"))
    monkeypatch.setenv("AUTOREG_CLASS_HOURS", "3")
    store = LiveClasses().store()
    assert store.path == tmp_path / "here.sqlite3" and store.hours == 3


def test_a_published_text_names_its_leader_and_a_kept_one_never_replaces_it():
    live = LiveClasses()
    live.keep_text("ABC", {"steps": 0}, "rebuilt")
    live.publish("ABC", {"steps": 1}, "the teacher's", leader="tab-1")
    live.keep_text("ABC", {"steps": 0}, "older")
    assert live.text("ABC") == ({"steps": 1}, "the teacher's") and live.leader("ABC") == "tab-1"
    live.set_leader("ABC", "tab-2")
    assert live.leader("ABC") == "tab-2" and live.leader(None) is None and live.leader("XYZ") is None
    live.forget_tabs()
    assert live.text("ABC") is None and live.leader("ABC") is None


def test_tabs_asking_together_wait_for_one_build():
    live = LiveClasses()
    built = []

    def build():
        time.sleep(0.05)
        built.append(1)
        return ["piece"]

    got: list = []
    threads = [threading.Thread(target=lambda: got.append(live.memo(("strip", "C", 1), build, ("memo", "strip"))))
               for _ in range(4)]
    threads += [threading.Thread(target=lambda: got.append(live.round_prefix(7, build))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 2 and len(got) == 8  # one build for the memo's key, one for the round
    assert len({id(piece) for piece in got}) == 2 and live.prefix(7) == ["piece"]


def test_the_memo_keeps_the_newest_pieces():
    live = LiveClasses(memo_kept=2)
    for n in range(3):
        live.memo(("k", n), lambda n=n: n)
    assert live.memo_size() == 2 and live.memo(("k", 0), lambda: "again") == "again"
    assert live.memo(("k", 2), lambda: "not built") == 2


def test_one_instance_per_process_made_on_first_use(monkeypatch):
    monkeypatch.setattr(live_classes, "_shared", Once(live_classes.LiveClasses))
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(live_classes.shared())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(live) for live in got}) == 1 and live_classes.shared() is got[0]
    live_classes.reset_for_tests()
    assert live_classes.shared() is not got[0]
