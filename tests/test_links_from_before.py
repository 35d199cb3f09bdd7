"""A link and a session file written by the app before ``autoreg_ui`` was regrouped into rooms (commit 459614c,
``tests/data/before_rooms.json``) rebuild exactly the same session today: every token, whole sequence and length."""
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from autoreg_core.engine.replay import recipe_from_dict, replay
from autoreg_ui import keys
from autoreg_ui.sharing import export

ROOT = Path(__file__).resolve().parents[1]
BEFORE = json.loads((ROOT / "tests" / "data" / "before_rooms.json").read_text())


def test_a_link_written_before_the_move_replays_every_token(embedded):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for name, value in BEFORE["link"].items():
        at.query_params[name] = value
    at.run()
    assert not at.exception and not at.warning and not at.error
    assert [s.value for s in at.success] == ["Rebuilt from the link: the prompt and 6 steps, replayed exactly."]
    session = at.session_state[keys.SESSION]
    assert list(session.generated_ids) == BEFORE["generated_ids"] and len(session.records) == 6
    assert dict(at.query_params) == BEFORE["link"]  # the app writes the same link back


def test_a_session_file_written_before_the_move_loads_and_replays_every_token(embedded):
    data = export.read_file(json.dumps(BEFORE["session_file"]).encode())
    values = export.widget_values(data)
    assert (values[keys.CFG_TEMPERATURE], values[keys.CFG_TOP_K], values[keys.CFG_SEED]) == (1.4, 40, 11)
    session = replay(embedded, recipe_from_dict(data["recipe"]))
    assert list(session.generated_ids) == BEFORE["generated_ids"]
    steps = BEFORE["session_file"]["steps"]
    assert [(r.token_id, r.forced, r.rank) for r in session.records] == [
        (s["token_id"], s["forced"], s["rank"]) for s in steps]
