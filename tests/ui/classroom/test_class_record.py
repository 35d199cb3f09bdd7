"""The class record, built from a real store file: every question and round numbered per class, scored tokens
(never typed text), anonymous unless nicknames were on; the CSV, JSON and hand-out section hold the same."""
import csv
import io
import json
from types import SimpleNamespace

import pytest

from autoreg_server.class_store import ClassStore
from autoreg_ui.classroom import record, text


@pytest.fixture
def store(tmp_path):
    return ClassStore(str(tmp_path / "classes.sqlite3"))


def label(token: int) -> str:
    return f"t{token}"


def two_round_class(store, names_on: bool = False, board: bool = False):
    other, other_key = store.create()  # another class first: the store's ids are server-wide
    store.ask(other, other_key, 0)
    store.start_round(other, other_key, 0, 2, {"temperature": 1.0}, [1, 2])
    code, key = store.create()
    ann, bob = store.join(code, "Ann"), store.join(code, "<i>Bob</i>")
    store.set_options(code, key, names_on=names_on, leaderboard=board)
    q1 = store.ask(code, key, 2)
    store.guess(code, ann, q1, "Paris!", 7, 1, 0.5, 1, 50.0)
    store.guess(code, bob, q1, "<script>x</script>", 9, 3, 0.25, 2, 30.0)
    store.reveal(code, key, q1, {"choice": 7, "choice_label": "t7", "prob": 0.5, "rank": 1, "top": [7],
                                 "tokens": {"7": ["t7", 0.5], "9": ["t9", 0.25]}})
    q2 = store.ask(code, key, 3)  # asked, never revealed
    store.guess(code, ann, q2, "cat", 4, 1, 0.1, 5, 10.0)
    r1 = store.start_round(code, key, 3, 2, {"temperature": 1.5}, [1, 2, 3])
    store.add_draw(code, ann, r1, [4, 5], 11)
    store.add_draw(code, bob, r1, [4, 6], 12)
    r2 = store.start_round(code, key, 3, 2, {"temperature": 0.0}, [1, 2, 3])
    store.add_draw(code, ann, r2, [4, 5], 13)
    store.add_draw(code, bob, r2, [4, 5], 14)
    steps = [SimpleNamespace(index=i, token_id=20 + i, prob=0.5 / i, rank=i, forced=False) for i in (1, 2, 3)]
    return record.class_record(store, store.info(code), steps, label, model="tiny", prompt="Hi"), code


def test_the_record_numbers_questions_and_rounds_per_class_and_keeps_every_guess_and_draw(store):
    rec, code = two_round_class(store)
    assert rec["class"] == code and [s["token"] for s in rec["steps"]] == ["t21", "t22", "t23"]
    assert [q["question"] for q in rec["questions"]] == [1, 2] and [r["round"] for r in rec["rounds"]] == [1, 2]
    q1, q2 = rec["questions"]
    assert (q1["revealed"], q1["model drew"], q1["model rank"]) == (True, "t7", 1)
    assert [(g["who"], g["scored token"], g["probability"], g["rank"], g["points"]) for g in q1["guesses"]] == [
        ("student 1", "t7", 0.5, 1, 50.0), ("student 2", "t9", 0.25, 2, 30.0)]
    assert (q2["revealed"], q2["model drew"], len(q2["guesses"])) == (False, None, 1)
    r1, r2 = rec["rounds"]
    assert [r1["temperature"], r2["temperature"]] == [1.5, 0.0]
    assert [d["tokens"] for d in r1["draws"]] == [["t4", "t5"], ["t4", "t6"]]
    assert [(b["path"], b["count"]) for b in r1["tree"]] == [(["t4"], 2), (["t4", "t5"], 1), (["t4", "t6"], 1)]
    assert (r1["different draws"], r2["different draws"]) == (2, 1)
    assert rec["leaderboard"] is None  # the leaderboard was off
    everything = record.record_json(rec) + record.record_csv(rec) + record.record_html(rec)
    for typed in ("Paris!", "script", "cat"):  # what students typed is never in the record
        assert typed not in everything
    assert "Ann" not in everything and "Bob" not in everything  # nicknames were off


def test_nicknames_and_the_leaderboard_only_when_they_were_on(store):
    rec, _ = two_round_class(store, names_on=True, board=True)
    assert [g["who"] for g in rec["questions"][0]["guesses"]] == ["Ann", "<i>Bob</i>"]
    assert rec["leaderboard"] == [{"who": "Ann", "points": 50.0}, {"who": "<i>Bob</i>", "points": 30.0}]
    section = record.record_html(rec)
    assert "&lt;i&gt;Bob&lt;/i&gt;" in section and "<i>Bob</i>" not in section  # escaped in the hand-out
    assert text.BOARD_HEADER in section
    assert "Show nicknames was on" in section


def test_the_csv_and_json_hold_the_same_record(store):
    rec, _ = two_round_class(store)
    assert json.loads(record.record_json(rec))["rounds"][1]["draws"][0]["seed"] == 13
    rows = list(csv.reader(io.StringIO(record.record_csv(rec))))
    assert rows[0] == record.CSV_COLUMNS
    parts = [r[0] for r in rows[1:]]
    assert parts.count("step") == 3 and parts.count("question") == 2 and parts.count("guess") == 3
    assert parts.count("round") == 2 and parts.count("draw") == 4 and parts.count("leaderboard") == 0
    assert [r[1] for r in rows[1:] if r[0] == "round"] == ["1", "2"]


def test_the_record_goes_at_the_end_of_the_handout(store):
    rec, code = two_round_class(store)
    page = record.with_record("<html><body><h1>x</h1></body></html>", rec)
    assert page.index("<h1>x</h1>") < page.index(text.RECORD_HEADER.format(code=code)) < page.index("</body>")


def test_a_question_heading_says_what_the_model_drew_only_once_revealed():
    assert text.record_question(2, 4, None, None, None) == "Question 2: the token after step 4 (not revealed)"
    assert text.record_question(1, 0, "·Paris", 0.773, 1) == (
        "Question 1: the token after the prompt; the model drew ·Paris (model probability p = 77.3%, rank 1, both "
        "before the repetition penalty, temperature and filters)")
    assert text.record_round(1, 3, 1.5, 1, 1) == "Round 1: 1 draw of up to 1 token after step 3, at temperature 1.5"
    assert text.record_round(2, 3, 0.0, 2, 5) == "Round 2: 2 draws of up to 5 tokens after step 3, at temperature 0"


def test_the_record_note_says_who_is_named_and_which_text_the_steps_count_in():
    on, off = text.record_note(True), text.record_note(False)
    assert "Show nicknames was on" in on and "one who chose none is numbered" in on
    assert "numbered in the order they joined (Show nicknames was off)" in off
    assert all("earlier text" in note for note in (on, off))
    assert "if it is on" in text.RECORD_HELP and "text of their guesses" in text.RECORD_HELP
