"""Export: session file → import gives the same session; the CSV says how each step was made; the hand-out."""
import base64
import io
import json
import re

import pandas as pd
import plotly.graph_objects as go
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.replay import ReplayError, import_session
from autoreg_ui import keys, messages
from autoreg_ui.sharing import export

A = SamplingConfig(temperature=1.1, top_k=30, top_p=0.9, seed=5, max_new_tokens=64, stop_sequences=("\n\n",))
B = SamplingConfig(temperature=0.5, min_p=0.05, repetition_penalty=1.2, seed=5, max_new_tokens=64)
HOSTILE = "<script>alert('x')</script> **bold** & [link](javascript:alert(1))"


def _session(tiny, prompt="Once upon a time"):
    s = Session(tiny, prompt)
    s.generate(3, A)
    s.force(" the", A)
    s.generate(2, B)
    return s


def _numbers(session):
    return [(r.index, r.token_id, r.forced, r.prob, r.prob_filtered, r.rank, r.logprob, r.entropy_bits, r.kept,
             r.config) for r in session.records]


def test_export_then_import_gives_the_same_session(tiny):
    s = _session(tiny)
    text = export.session_json(s, B)
    again = import_session(tiny, export.read_file(text.encode("utf-8")))
    assert (again.prompt, again.chat, again.seed, again.ids) == (s.prompt, s.chat, s.seed, s.ids)
    assert _numbers(again) == _numbers(s) and len(again.records) == 6
    assert export.session_file_name(s) == "autoreg-session-once-upon-a-time.json"


def test_the_csv_carries_the_prompt_and_each_steps_settings(tiny):
    s = _session(tiny, prompt="Hello, world")
    frame = pd.read_csv(io.StringIO(export.history_csv(s)), keep_default_na=False)
    assert len(frame) == 6 and list(frame["step"]) == [1, 2, 3, 4, 5, 6]
    assert set(frame["prompt"]) == {"Hello, world"} and set(frame["seed"]) == {5}
    assert list(frame["model"]) == [tiny.name] * 6 and list(frame["chat"]) == [False] * 6
    assert list(frame["temperature"]) == [1.1] * 4 + [0.5] * 2
    assert list(frame["top_k"]) == [30] * 4 + [0] * 2
    assert list(frame["repetition_penalty"]) == [1.0] * 4 + [1.2] * 2
    assert [json.loads(v) for v in frame["stop_sequences"]] == [["\n\n"]] * 4 + [[]] * 2
    assert list(frame["forced"]) == [False, False, False, True, False, False]
    assert list(frame["id"]) == [r.token_id for r in s.records]


@pytest.mark.parametrize("raw,said", [
    (b"x" * (export.MAX_FILE_MB * 1024 * 1024 + 1), "larger than 5 MiB"),
    (b"\xff\xfe", "not JSON"),
    (b"{nope", "not JSON"),
    (b"[1, 2]", "does not hold a session"),
])
def test_a_bad_file_says_what_is_wrong(raw, said):
    with pytest.raises(ReplayError, match=said):
        export.read_file(raw)


class Upload:
    def __init__(self, data: bytes):
        self.data = data

    def getvalue(self) -> bytes:
        return self.data


def test_loading_a_file_sets_the_sidebar_and_queues_the_replay(tiny):
    s = _session(tiny)
    s.generate(1, A)  # the last settings are A again: the sidebar takes them
    data = json.loads(export.session_json(s, A))
    state = {keys.LOAD_SESSION: Upload(json.dumps(data).encode())}
    export.on_upload(state)
    assert state[keys.LINK_PENDING] == ("file", data)
    assert (state[keys.CFG_TEMPERATURE], state[keys.CFG_TOP_K], state[keys.CFG_TOP_P], state[keys.CFG_SEED]) == \
           (1.1, 30, 0.9, 5)
    assert state[keys.CFG_STOPS] == "\\n\\n" and SamplingConfig.parse_stop_sequences(state[keys.CFG_STOPS]) == ("\n\n",)


def test_loading_a_broken_file_is_a_message_not_a_replay():
    state = {keys.LOAD_SESSION: Upload(b'{"format": "autoreg-session/1", "recipe": {"segments": "x"}}')}
    export.on_upload(state)
    assert keys.LINK_PENDING not in state
    [(level, text)] = messages.take(state)
    assert level == "error" and text.startswith("The session file cannot be loaded: The session recipe is malformed")


def test_the_hand_out_is_one_offline_page_with_every_chart_and_the_session(tiny):
    s = _session(tiny, prompt=HOSTILE)
    shown = [("autoreg-attention-layer3", go.Figure(go.Bar(x=["<b>x</b>"], y=[1]))),
             ("autoreg-step-6-top-tokens", go.Figure(go.Bar(y=[2])))]  # the step page's: rebuilt from the session
    page = export.handout_html(s, B, shown, "http://host/step?prompt=x&steps=6", plotly_js="/*PLOTLY*/")
    assert page.startswith("<!doctype html>") and page.count("/*PLOTLY*/") == 1
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?https?:""", page)  # nothing fetched online
    assert page.count('class="chart"') == 3  # the chain rule, the last step's top tokens, the attention chart
    assert "<h3>Attention layer3</h3>" in page
    assert page.count("Plotly.newPlot(") == 3
    assert 'href="http://host/step?prompt=x&amp;steps=6"' in page
    blob = re.search(r'href="data:application/json;base64,([A-Za-z0-9+/=]+)"', page).group(1)
    data = json.loads(base64.b64decode(blob))
    assert [step["token_id"] for step in data["steps"]] == s.generated_ids and data["recipe"]["prompt"] == HOSTILE
    assert export.handout_name(s) == "autoreg-handout-script-alert-x-script.html"


def test_the_share_link_is_built_from_the_session_as_it_is_now(tiny):
    from autoreg_ui.sharing import links
    from autoreg_ui.sharing.prompt_store import PromptStore

    s = _session(tiny)
    store = PromptStore()
    url = links.share_url("http://host:8501", s, B, None, store.keep)
    query = __import__("urllib.parse").parse.parse_qs(url.split("?", 1)[1])
    assert url.startswith("http://host:8501/?") and query["steps"] == ["6"] and query["prompt"] == ["Once upon a time"]
    assert query["cfg_temperature"] == ["0.5"] and query["cfg_min_p"] == ["0.05"] and query["cfg_seed"] == ["5"]
    assert query["seg"][0].startswith("1~t1.1~k30~p0.9~s") and query["forced"] == [f"4-{s.records[3].token_id}"]
    assert "cfg_top_k" in query and query["cfg_top_k"] == ["0"] and "run_seed" not in query
    assert links.share_url(None, s, B, None, store.keep) is None
    again = links.share_url("http://host/attention", s, B, "Other/model", store.keep)
    assert again.startswith("http://host/attention?") and again.endswith("&model=Other%2Fmodel")


def test_the_hand_out_bundles_plotly_js(tiny):
    page = export.handout_html(Session(tiny, "Hi"), A, [])
    assert len(page) > 3_000_000 and "cdn.plot.ly" not in page.split("<body>")[1]
    assert page.count('class="chart"') == 0 and "Every step" not in page  # no steps yet: no table, no charts


def test_downloads_during_steps_always_read_one_consistent_moment(tiny):
    """One thread steps (and undoes) while another makes the CSV and JSON 200 times each: no exception,
    every JSON loads back into the same tokens, every CSV has one row per step of its own moment."""
    import io
    import threading

    import pandas as pd

    from autoreg_core import SamplingConfig, Session
    from autoreg_core.engine.replay import import_session
    from autoreg_ui.sharing import export

    session = Session(tiny, "The cat sat on the")
    config = SamplingConfig(temperature=0.9, top_k=20, seed=3, max_new_tokens=500)
    done = threading.Event()
    errors: list[BaseException] = []

    def stepper() -> None:
        try:
            while not done.is_set():
                session.generate(3, config)
                session.undo()
                if len(session.records) > 40:
                    session.reset()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=stepper)
    thread.start()
    try:
        for _ in range(200):
            data = json.loads(export.session_json(session, config))
            assert len(data["steps"]) == data["recipe"]["steps"]
            rebuilt = import_session(tiny, data)
            assert rebuilt.generated_ids == [s["token_id"] for s in data["steps"]]
            frame = pd.read_csv(io.StringIO(export.history_csv(session)))
            assert list(frame["step"]) == list(range(1, len(frame) + 1))
    finally:
        done.set()
        thread.join()
    assert errors == []
