"""A student's tab forging the teacher over Streamlit's own websocket protocol: replayed teacher clicks and
made-up keys change nothing in the class, and a made-up key is refused with a message."""
import asyncio
import sqlite3
import urllib.parse

import pytest
from conftest import in_own_thread

from .conftest import start_server, stop_server

pytestmark = pytest.mark.e2e


def _asked(db) -> int:
    with sqlite3.connect(db) as raw:
        return raw.execute("SELECT COUNT(*) FROM questions").fetchone()[0]


async def _forge(url: str, db, code: str, key: str, seat: str) -> dict:
    from bench.lib.client import AppClient

    teacher = AppClient(url, "class", urllib.parse.urlencode({"class": code, "key": key}))
    student = AppClient(url, "class", urllib.parse.urlencode({"class": code, "seat": seat}))
    forger = AppClient(url, "class", urllib.parse.urlencode({"class": code, "key": key[:-2] + "xy"}))
    out = {}
    try:
        for client in (teacher, student, forger):
            await client.connect()
        out["teacher_open"] = await teacher.open()
        out["student_open"] = await student.open()
        ask = teacher.widgets["class_ask"]  # the teacher's Ask button, as its own tab saw it
        # the student's tab sends the teacher's click: the same widget id, a trigger, its own session
        out["replayed"] = await student._rerun([(ask, "trigger_value", True)], ask.fragment_id)
        out["forger_open"] = await forger.open()
        out["forger_widgets"] = sorted(forger.widgets)
        out["asked_before_teacher"] = _asked(db)
        out["teacher_click"] = await teacher.press("class_ask")  # the control: the same message from the teacher
    finally:
        for client in (teacher, student, forger):
            await client.close()
    return out


def test_replayed_teacher_clicks_and_made_up_keys_change_nothing(tmp_path):
    from autoreg_server.class_store import ClassStore

    db = tmp_path / "classes.sqlite3"
    proc, url = start_server("streamlit-class-hostile.log", env={"AUTOREG_CLASS_DB": str(db)})
    try:
        store = ClassStore(db)
        code, key = store.create()
        seat = store.join(code, "Eve")
        out = in_own_thread(asyncio.run, _forge(url, db, code, key, seat))
    finally:
        stop_server(proc)
    assert not out["teacher_open"].exceptions and not out["replayed"].exceptions
    assert out["asked_before_teacher"] == 0  # the replayed Ask did nothing
    assert _asked(db) == 1 and store.info(code).open_question is not None  # the teacher's own click asks
    assert [s.student for s in store.students(code) if not s.removed] == [seat]  # nobody removed, nobody added
    assert any("teacher key that is not this class's" in a for a in out["forger_open"].alerts)
    assert "class_ask" not in out["forger_widgets"] and "class_end" not in out["forger_widgets"]
    assert "class_code_box" in out["forger_widgets"]  # the forger is offered the join form, nothing more
