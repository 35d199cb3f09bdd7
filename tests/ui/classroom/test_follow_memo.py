"""A follower's redraw: the drawn pieces memo (keyed by the class's whole recipe) and the heartbeat's throttle."""
from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.replay import recipe_of, recipe_to_dict
from autoreg_server import live_classes
from autoreg_server.once import Once
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import mode as class_mode


def _recipe(session, config) -> dict:
    return recipe_to_dict(recipe_of(session.snapshot(), config))


def test_every_change_of_the_teachers_text_is_a_new_memo_key(tiny):
    greedy = SamplingConfig(temperature=0.0, max_new_tokens=20)
    session = Session(tiny, "The cat")
    for _ in range(3):
        session.step(greedy)
    three = _recipe(session, greedy)
    key = class_live.memo_key(("strip", "ABC"), three, tiny.name)
    assert class_live.memo_key(("strip", "ABC"), dict(reversed(list(three.items()))), tiny.name) == key  # order
    assert class_live.memo_key(("strip", "XYZ"), three, tiny.name) != key  # another class
    assert class_live.memo_key(("last step", "ABC"), three, tiny.name) != key  # another piece
    assert class_live.memo_key(("strip", "ABC"), three, "another-model") != key
    session.undo()
    undone = _recipe(session, greedy)
    session.step(greedy)
    assert _recipe(session, greedy) == three  # greedy: the same text again is the same key
    session.step(SamplingConfig(temperature=0.0, max_new_tokens=20, top_k=5))
    other_settings = _recipe(session, greedy)
    session.reset()
    reset = _recipe(session, greedy)
    fresh = Session(tiny, "A dog")
    for _ in range(3):
        fresh.step(greedy)
    new_prompt = _recipe(fresh, greedy)
    keys = [class_live.memo_key(("strip", "ABC"), r, tiny.name) for r in (three, undone, other_settings, reset,
                                                                          new_prompt)]
    assert len(set(keys)) == 5


def test_a_piece_is_built_once_per_text_and_the_oldest_go_first(monkeypatch):
    live = live_classes.LiveClasses(memo_kept=2)
    monkeypatch.setattr(live_classes, "_shared", Once(lambda: live))
    built = []

    def build(name):
        def make():
            built.append(name)
            return [name]
        return make

    a1 = class_live.memo(("strip", "C"), {"steps": 1}, "m", build("a"))
    assert class_live.memo(("strip", "C"), {"steps": 1}, "m", build("again")) is a1 and built == ["a"]
    class_live.memo(("strip", "C"), {"steps": 2}, "m", build("b"))
    class_live.memo(("strip", "C"), {"steps": 3}, "m", build("c"))  # a third text: the first goes
    assert built == ["a", "b", "c"] and live.memo_size() == 2
    class_live.memo(("strip", "C"), {"steps": 1}, "m", build("a2"))
    assert built == ["a", "b", "c", "a2"]


def test_the_heartbeat_writes_a_new_place_at_once_and_the_same_one_once_a_minute():
    place = ("ABC", "seat", "following", "class")
    assert class_mode.heartbeat_due(None, place, 100.0)
    last = (*place, 100.0)
    assert not class_mode.heartbeat_due(last, place, 100.0 + class_mode.HEARTBEAT_S - 0.01)
    assert class_mode.heartbeat_due(last, place, 100.0 + class_mode.HEARTBEAT_S)
    for moved in (("ABC", "seat", "exploring", "class"), ("ABC", "seat", "following", "step"),
                  ("XYZ", "seat", "following", "class"), ("ABC", "other", "following", "class")):
        assert class_mode.heartbeat_due(last, moved, 100.5)
