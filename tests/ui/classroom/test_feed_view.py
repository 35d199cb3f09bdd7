"""The class feed's document: the teacher's text as a follower draws it, built outside any tab."""
from __future__ import annotations

import json

import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.replay import recipe_of, recipe_to_dict
from autoreg_server import live_classes
from autoreg_server.class_store import ClassStore
from autoreg_server.once import Once
from autoreg_ui.classroom import feed_view
from autoreg_ui.classroom import text as class_text

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=40)


@pytest.fixture
def live(tmp_path, monkeypatch, tiny):
    held = live_classes.LiveClasses(opener=lambda: ClassStore(tmp_path / "classes.db"))
    monkeypatch.setattr(live_classes, "_shared", Once(lambda: held))
    monkeypatch.setattr(feed_view, "_bundle", lambda: tiny)
    return held


def teach(live, session: Session, code: str, key: str, tab_holds: bool = True) -> dict:
    recipe = recipe_to_dict(recipe_of(session.snapshot(), GREEDY))
    if tab_holds:
        live.publish(code, recipe, session.snapshot(), "tab")
    live.store().set_recipe(code, key, recipe)
    return recipe


def test_the_document_holds_the_teachers_generated_tokens_and_the_removed_seats(live, tiny):
    store = live.store()
    code, key = store.create()
    seats = [store.join(code), store.join(code)]
    session = Session(tiny, "The cat sat")
    for _ in range(4):
        session.step(GREEDY)
    teach(live, session, code, key)
    version, doc, removed = feed_view.build(code)
    assert version == store.version(code)
    assert removed == frozenset()
    assert doc["text"]["generated"] == session.generated_ids and len(doc["text"]["generated"]) == 4
    assert doc["text"]["prompt_len"] == session.prompt_len
    assert doc["text"]["step"]["index"] == 4
    assert doc["text"]["step"]["caption"] == class_text.LAST_STEP_CHART.format(n=4)
    assert doc["text"]["settings"].startswith("The teacher's settings: ")
    assert doc["page"] == [True, None, [None, False], None]
    json.dumps(doc)  # it travels as JSON as it is
    assert "template" not in doc["text"]["step"]["figure"]["layout"]  # the page's colours, not plotly's
    bars = doc["text"]["step"]["figure"]["data"]
    assert bars and all(trace["type"] == "bar" for trace in bars)

    store.remove(code, key, seats[0])
    _, _, removed = feed_view.build(code)
    assert removed == frozenset(seats[:1])


def test_a_process_without_the_teachers_tab_rebuilds_the_same_text(live, tiny):
    store = live.store()
    code, key = store.create()
    store.join(code)
    session = Session(tiny, "Once upon a time")
    for _ in range(5):
        session.step(GREEDY)
    teach(live, session, code, key, tab_holds=False)
    _, doc, _ = feed_view.build(code)
    assert doc["text"]["generated"] == session.generated_ids and len(session.generated_ids) == 5


def test_typed_text_reaches_the_document_escaped(live, tiny):
    store = live.store()
    code, key = store.create()
    session = Session(tiny, '<script>alert(1)</script> "x" & <b>')
    session.step(GREEDY)
    teach(live, session, code, key)
    _, doc, _ = feed_view.build(code)
    strip = doc["text"]["strip"]
    assert "<script" not in strip and "<b>" not in strip
    assert "&lt;" in strip


def test_before_a_prompt_the_document_has_no_text_and_an_ended_class_has_no_document(live):
    store = live.store()
    code, key = store.create()
    version, doc, _ = feed_view.build(code)
    assert doc["text"] is None and doc["version"] == version
    assert doc["page"] == [False, None, [None, False], None]
    store.end(code, key)
    assert feed_view.build(code) is None


def test_the_page_key_follows_the_question_while_the_text_is_at_its_step(live, tiny):
    store = live.store()
    code, key = store.create()
    session = Session(tiny, "The cat sat")
    session.step(GREEDY)
    teach(live, session, code, key)
    qid = store.ask(code, key, len(session.records))
    _, doc, _ = feed_view.build(code)
    assert doc["page"][1] == [qid, False]
    session.step(GREEDY)  # the teacher moves on: the question's box is gone from the students' pages
    teach(live, session, code, key)
    _, doc, _ = feed_view.build(code)
    assert doc["page"][1] is None


def test_only_a_seated_student_may_read(live):
    store = live.store()
    code, key = store.create()
    seat = store.join(code)
    assert feed_view.seated(code, seat)
    assert not feed_view.seated(code, "not-a-seat")
    assert not feed_view.seated(code, "")
    assert not feed_view.seated(code, key)  # the teacher's key is no seat
    store.remove(code, key, seat)
    assert not feed_view.seated(code, seat)


def test_the_feed_path_quotes_what_it_is_given():
    assert feed_view.feed_path("ABC", "s e/t&k=1") == "/api/class/ABC/feed?class=ABC&seat=s%20e%2Ft%26k%3D1"


def test_the_page_key_says_whether_the_open_round_still_draws_from_the_teachers_text(live, tiny):
    store = live.store()
    code, key = store.create()
    session = Session(tiny, "The cat sat")
    session.step(GREEDY)
    teach(live, session, code, key)
    rid = store.start_round(code, key, len(session.records), 3, {"temperature": 1.0}, list(session.ids))
    _, doc, _ = feed_view.build(code)
    assert doc["page"][2] == [rid, True]
    session.step(GREEDY)  # the teacher steps while the round is open: the draws no longer continue this text
    teach(live, session, code, key)
    _, doc, _ = feed_view.build(code)
    assert doc["page"][2] == [rid, False]


def test_a_seat_not_shaped_like_the_stores_is_refused_before_the_store_is_read(live, monkeypatch):
    store = live.store()
    code, _ = store.create()
    seat = store.join(code)
    read = []
    monkeypatch.setattr(type(store), "student", lambda self, c, s: read.append(s))
    for bogus in ("x" * 15, "x" * 17, "a" * 15 + "!", "ä" * 16):
        assert not feed_view.seated(code, bogus)
    assert read == []
    feed_view.seated(code, seat)
    assert read == [seat]
