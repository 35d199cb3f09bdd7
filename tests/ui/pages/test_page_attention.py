"""The attention page under Streamlit's AppTest: stepping, layer/head changes, bad links, gaps."""
import base64
import json

import numpy as np
import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

APP = str(ROOT / "app.py")
PAGE = "pages/attention.py"

pytestmark = pytest.mark.integration
TIMEOUT = 180


def _page(prompt=None, query=None):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if prompt is not None:
        at.session_state["prompt_text"] = prompt
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Attention and the KV cache"
    return at


def _array(value):
    """Plotly JSON arrays may be plain lists or typed binary blocks {'dtype', 'bdata', 'shape'}."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            arr = arr.reshape([int(x) for x in str(value["shape"]).split(",")])
        return arr
    return np.asarray(value, dtype=float)


def _rows(spec) -> int:
    """Rows of the triangle heatmap."""
    return _array(spec["data"][1]["z"]).shape[0]


SECTIONS = ["1 · Where it looked", "2 · Causal triangle", "3 · Grouped-query attention",
            "4 · KV cache", "5 · Memory calculator", "6 · Prefill vs decode"]
SECTION_OF = {"att_bar": 0, "att_heads": 0, "att_triangle": 1, "att_gqa": 2, "att_cache_growth": 3, "att_memory": 4,
              "att_phase": 5}


def _open(at, i: int):
    """Open section ``i`` of the page (only the open one is drawn)."""
    at.session_state["att_section"] = SECTIONS[i]
    at.run()
    assert not at.exception, at.exception


def _fig(at, key):
    """The chart with this key, after opening its section if another one is open."""
    for attempt in range(2):
        for el in at.get("plotly_chart"):
            if el.proto.id.endswith(key):
                return json.loads(el.proto.spec)
        if attempt == 0:
            _open(at, SECTION_OF[key])
    raise AssertionError(f"no chart {key}; have {[e.proto.id for e in at.get('plotly_chart')]}")


def test_step_and_change_layer_head(embedded):
    at = _page()
    at.slider(key="cfg_temperature").set_value(0.0).run()
    s = at.session_state["session"]
    N = s.cache_len
    assert N == s.prompt_len and not at.warning  # prompt rows filled from the prefill pass
    tri = _fig(at, "att_triangle")
    assert _rows(tri) == N

    at.button(key="att_next").click().run()
    assert not at.exception
    assert len(s.records) == 1 and tuple(s.records[0].attention.shape) == (30, 9, N + 1)
    tri = _fig(at, "att_triangle")
    assert _rows(tri) == N + 1
    bar = _fig(at, "att_bar")
    y = _array(bar["data"][0]["y"])
    assert y.shape == (N + 1,) and abs(y.sum() - 1) < 2e-3
    assert "Layer 15, head 0" in bar["layout"]["title"]["text"]

    at.slider(key="att_layer").set_value(3).run()
    bar3 = _fig(at, "att_bar")
    assert "Layer 3" in bar3["layout"]["title"]["text"] and not np.allclose(_array(bar3["data"][0]["y"]), y)
    assert "Layer 3" in _fig(at, "att_triangle")["layout"]["title"]["text"]

    at.selectbox(key="att_head").set_value(-1).run()
    mean = _fig(at, "att_bar")
    assert "mean of 9 heads" in mean["layout"]["title"]["text"]
    assert not np.allclose(_array(mean["data"][0]["y"]), _array(bar3["data"][0]["y"]))

    at.toggle(key="att_all_heads").set_value(True).run()
    assert len(_fig(at, "att_heads")["data"]) == 9

    at.button(key="att_next").click().run()
    assert _rows(_fig(at, "att_triangle")) == N + 2
    _open(at, 3)
    assert any("Equal, byte for byte" in x.value for x in at.success)
    assert [c.proto.id.split("-")[-1] for c in at.get("plotly_chart")] == ["att_cache_growth"]  # the open one only
    at.button(key="att_undo").click().run()
    assert _rows(_fig(at, "att_triangle")) == N + 1

    _open(at, 4)
    at.selectbox(key="att_preset").set_value("70B model with GQA, 4K tokens").run()
    assert at.select_slider(key="att_seq").value == 4096
    assert _metric(at, "KV cache") == "1.25 GiB"
    at.slider(key="att_batch").set_value(8).run()
    assert _metric(at, "KV cache") == "10.00 GiB"
    _open(at, 0)  # the calculator closed: its settings are kept for when it opens again
    _open(at, 4)
    assert (at.select_slider(key="att_seq").value, at.slider(key="att_batch").value) == (4096, 8)
    assert _metric(at, "KV cache") == "10.00 GiB"
    assert not at.exception


def _metric(at, label):
    values = [m.value for m in at.metric if m.label == label]
    assert len(values) == 1, values
    return values[0]


def test_calculator_weights_and_cache_precisions_differ(embedded):
    at = _page()
    _open(at, 4)
    assert at.selectbox(key="att_preset").value == "Loaded model"
    assert (at.selectbox(key="att_precision").value, at.selectbox(key="att_cache_precision").value) == (
        "float32", "float32")
    at.selectbox(key="att_preset").set_value("70B model, 4-bit weights + 16-bit cache, 128K").run()
    assert at.select_slider(key="att_seq").value == 131_072
    assert (at.selectbox(key="att_precision").value, at.selectbox(key="att_cache_precision").value) == (
        "4-bit, Q4_1 (5 bits with its scales)", "float16 / bfloat16")
    # 70.55 B weights × 5/8 byte (4-bit + Q4_1 scales)
    assert (_metric(at, "KV cache"), _metric(at, "Weights")) == ("40.00 GiB", "41.07 GiB")
    at.selectbox(key="att_precision").set_value("float16 / bfloat16").run()  # weights only: the cache stays
    assert (_metric(at, "KV cache"), _metric(at, "Weights")) == ("40.00 GiB", "131.42 GiB")
    at.selectbox(key="att_cache_precision").set_value("int8 / fp8").run()
    assert (_metric(at, "KV cache"), _metric(at, "Weights")) == ("20.00 GiB", "131.42 GiB")
    assert not at.exception


def test_units_and_the_worked_example_on_the_model(embedded):
    at = _page()
    _open(at, 3)
    spec = embedded.spec
    text = " ".join(m.value for m in at.markdown)
    assert "1 KiB = 1,024 bytes" in " ".join(c.value for c in at.caption)
    per_position = 2 * spec.n_layers * spec.n_kv_heads * spec.head_dim * 4  # float32 on CPU
    assert f"holds 150 positions: **{150 * per_position / 1024 ** 2:,.2f} MiB** ({150 * per_position:,} bytes)" in text
    assert f"the prefill writes 50 positions at once, {50 * per_position / 1024 ** 2:,.2f} MiB" in text


def test_bad_link_and_stale_state(embedded):
    at = _page(query={"layer": "99", "head": "-1"})
    text = [w.value for w in at.warning]
    assert text == ["The layer 99 in the link does not exist: this model has layers 0–29; it was ignored.",
                    "The head -1 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."]
    assert at.slider(key="att_layer").value == 15  # a sensible default instead
    stale = AppTest.from_file(APP, default_timeout=TIMEOUT)
    stale.session_state["att_layer"] = 500  # stale state, e.g. left by a bigger model
    stale.session_state["att_head"] = 42
    stale.switch_page(PAGE).run()
    assert not stale.exception
    assert stale.slider(key="att_layer").value == 15 and stale.selectbox(key="att_head").value == 0

    good = _page(query={"layer": "2", "head": "mean"})
    assert not good.warning
    assert good.slider(key="att_layer").value == 2 and good.selectbox(key="att_head").value == -1


def _two_steps_on_the_step_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/step.py").run()  # the step page: capture off there
    at.slider(key="cfg_temperature").set_value(0.0).run()
    at.button(key="step_next").click().run()
    at.button(key="step_next").click().run()
    return at


def test_a_short_text_arrives_with_its_missing_rows_computed(embedded):
    at = _two_steps_on_the_step_page()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert not any("not captured" in w.value for w in at.warning)
    s = at.session_state["session"]
    assert [tuple(r.attention.shape) for r in s.records] == [(30, 9, s.prompt_len + 1), (30, 9, s.prompt_len + 2)]


def test_steps_without_capture_are_marked_then_backfilled(embedded, monkeypatch):
    from autoreg_ui.lessons.attention import controller

    monkeypatch.setattr(controller, "FILL_ON_ARRIVAL_TOKENS", 0)  # a text too long to fill on arrival: the button
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/step.py").run()  # the step page: capture off there
    at.slider(key="cfg_temperature").set_value(0.0).run()
    at.button(key="step_next").click().run()
    at.button(key="step_next").click().run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("not captured" in w.value for w in at.warning)  # the latest row, in section 1
    _open(at, 1)
    assert any("2 of" in w.value and "not captured" in w.value for w in at.warning)
    at.button(key="att_backfill_triangle").click().run()
    assert not at.exception
    assert not any("not captured" in w.value for w in at.warning)
    assert any("Recomputed 2 missing rows" in x.value for x in at.success)
    s = at.session_state["session"]
    assert [tuple(r.attention.shape) for r in s.records] == [(30, 9, s.prompt_len + 1), (30, 9, s.prompt_len + 2)]


def test_one_token_prompt(embedded):
    prompt = next(w for w in ("Hello", "The", "Hi") if len(embedded.tokenizer(w)["input_ids"]) == 1)
    at = _page(prompt=prompt)
    s = at.session_state["session"]
    assert s.prompt_len == 1
    assert _rows(_fig(at, "att_triangle")) == 1
    _open(at, 5)
    assert any("Take a decode step" in i.value for i in at.info)  # no decode timing yet
    at.button(key="att_next").click().run()
    assert not at.exception and _rows(_fig(at, "att_triangle")) == 2


def test_recompute_the_cache_from_scratch_on_the_page(embedded):
    at = _page("The capital of France is")
    _open(at, 3)
    at.button(key="att_recompute").click().run()
    assert not at.exception, at.exception
    found = [s.value for s in at.success if s.value.startswith("Recomputed ")]
    n = len(embedded.tokenizer("The capital of France is")["input_ids"])
    assert len(found) == 1 and found[0].startswith(f"Recomputed {n} positions × {embedded.spec.n_layers} layers")
    tables = [d.value for d in at.dataframe if "largest |cached − recomputed|" in d.value.columns]
    assert len(tables) == 1 and len(table := tables[0]) == embedded.spec.n_layers
    assert float(table.iloc[:, 1].max()) < 1e-3  # rounding only: the cache is exact
    assert list(table["positions compared"]) == [n] * embedded.spec.n_layers  # no sliding layer: all of them
