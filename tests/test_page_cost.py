"""The "Naive vs KV cache" page under Streamlit's AppTest, on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tiny import tiny_bundle

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/4_cost.py"


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny_model")
    bundle = tiny_bundle()
    bundle.model.save_pretrained(folder)
    bundle.tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture
def page(tiny_folder, monkeypatch):
    monkeypatch.setenv("AUTOREG_ALLOWED_MODELS", tiny_folder)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["model_name"] = tiny_folder
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def _frame(at, column: str):
    """The dataframe with this column (AppTest does not expose a dataframe's key)."""
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(frames) == 1, [list(d.value.columns) for d in at.dataframe]
    return frames[0]


def _texts(at, kind: str) -> list[str]:
    return [str(e.value) for e in getattr(at, kind)]


def test_page_before_any_measurement(page):
    assert page.title[0].value.startswith("Naive vs KV cache")
    assert any("Run the race" in t for t in _texts(page, "info"))
    assert page.button(key="cost_stop").disabled
    # tiny model reads 256 positions at most: longer choices are not offered
    assert max(page.select_slider(key="cost_max_len").options, key=int) == "256"
    # the counting table: 1000 tokens -> 500,500 positions naive vs 1,000 cached
    counts = _frame(page, "quantity")
    row = counts[counts["quantity"] == "token positions processed"].iloc[0]
    assert (row["naive"], row["KV cache"]) == ("500,500", "1,000")


def test_run_the_race_small(page, tiny_folder):
    page.select_slider(key="cost_max_len").set_value(32)
    page.button(key="cost_run").click()
    page.run()
    assert not page.exception, page.exception
    results = page.session_state["cost_results"]
    key = f"{tiny_folder}|cpu|float32|32"
    assert list(results) == [key]
    lengths = [p["length"] for p in results[key]["points"]]
    assert lengths == [1, 2, 4, 8, 12, 16, 20, 24, 28, 32]
    assert not results[key]["stopped_early"]
    labels = [m.label for m in page.metric]
    assert "Speedup at L = 32" in labels
    assert page.get("download_button")  # the CSV of the measured table
    table = _frame(page, "naive_step_ms")
    assert list(table["length"]) == lengths
    assert "cost_partial" not in page.session_state
    # revisiting: no new measurement, same numbers, button offers to run again
    before = results[key]["seconds"]
    page.run()
    assert page.session_state["cost_results"][key]["seconds"] == before
    assert page.button(key="cost_run").label == "Run the race again"
    # changing the count input never touches the measurements
    page.number_input(key="cost_T").set_value(10)
    page.run()
    assert not page.exception
    assert any("10 tokens" in c for c in _texts(page, "caption"))


def test_interrupted_sweep_is_kept_as_stopped_early(page, tiny_folder):
    """A Stop click reruns the script mid-sweep; the next run finds the partial points and keeps them."""
    key = f"{tiny_folder}|cpu|float32|64"
    page.session_state["cost_partial"] = {
        "key": key, "model": tiny_folder, "device": "cpu", "dtype": "float32", "lengths": [1, 2, 4, 8, 64],
        "points": [{"length": L, "cached_ms": 1.0, "naive_ms": 1.0 + L / 10, "cached_repeats": 3,
                    "naive_repeats": 1} for L in (1, 2, 4)],
        "status": "running", "started": 0.0}
    page.select_slider(key="cost_max_len").set_value(64)
    page.run()
    assert not page.exception, page.exception
    assert any("Stopped early at length 4" in w for w in _texts(page, "warning"))
    assert "cost_partial" not in page.session_state
    assert page.session_state["cost_results"][key]["stopped_early"]


def test_interrupted_before_first_point(page):
    page.session_state["cost_partial"] = {"key": "x|cpu|float32|64", "model": "x", "device": "cpu",
                                          "dtype": "float32", "lengths": [1, 64], "points": [],
                                          "status": "running", "started": 0.0}
    page.run()
    assert not page.exception
    assert any("before the first length" in w for w in _texts(page, "warning"))
