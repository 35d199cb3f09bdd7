"""The "Naive vs KV cache" page under Streamlit's AppTest, on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

import pytest

from autoreg_core.experiments import kv_cost as engine
from autoreg_ui import keys
from autoreg_ui.format import BYTE_UNITS_NOTE
from autoreg_ui.lessons.cost import controller as cost
from autoreg_ui.lessons.cost import keys as cost_keys

PAGE = "pages/cost.py"


@pytest.fixture
def page(open_page):
    return open_page(PAGE)


def _frame(at, column: str):
    """The dataframe with this column (AppTest does not expose a dataframe's key)."""
    frames = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(frames) == 1, [list(d.value.columns) for d in at.dataframe]
    return frames[0]


def _texts(at, kind: str) -> list[str]:
    return [str(e.value) for e in getattr(at, kind)]


def _key(folder: str, max_len: int) -> cost.RaceKey:
    return cost.RaceKey(folder, "cpu", "float32", max_len)


def test_page_before_any_measurement(page):
    assert page.title[0].value.startswith("Naive vs KV cache")
    assert any("Run the race" in t for t in _texts(page, "info"))
    assert page.button(key=cost_keys.COST_STOP).disabled and page.button(key=cost_keys.COST_RESUME).disabled
    # tiny model reads 256 positions at most: longer choices are not offered
    assert [int(o) for o in page.select_slider(key=cost_keys.COST_MAX_LEN).options] == [16, 32, 64, 128, 256]
    # the count table: 1,000 tokens -> 500,500 positions naive vs 1,000 cached, attention still 500,500 per head
    counts = _frame(page, "quantity").set_index("quantity")
    assert list(counts.index) == ["token positions processed (projections, MLP)",
                                  "attention dot products per layer and head",
                                  "attention dot products, all layers and heads", "FLOPs"]
    positions = counts.loc["token positions processed (projections, MLP)"]
    assert (positions["naive"], positions["KV cache"]) == ("500,500", "1,000")
    assert counts.loc["attention dot products per layer and head", "KV cache"] == "500,500"
    markdown = " ".join(_texts(page, "markdown"))
    assert "T² = 1,000,000" in markdown and "T(T+1)/2 = 500,500" in markdown
    assert "not the attention over them" in markdown
    assert BYTE_UNITS_NOTE in _texts(page, "caption")
    assert [m.label for m in page.metric] == ["Copy bandwidth (read + write)", "Matmul peak (float32)", "Ridge point"]


def test_step_buttons_advance_the_session_from_this_page(page):
    page.button(key=f"{cost_keys.COST_PAGE}_next").click()
    page.run()
    assert not page.exception, page.exception
    session = page.session_state[keys.SESSION]
    assert len(session.records) == 1
    assert any(f"its KV cache holds {session.cache_len} positions" in c for c in _texts(page, "caption"))


def test_run_the_race_small(page, tiny_folder):
    page.select_slider(key=cost_keys.COST_MAX_LEN).set_value(32)
    page.button(key=cost_keys.COST_RUN).click()
    page.run()
    assert not page.exception, page.exception
    results = page.session_state[cost_keys.COST_RACE].results
    key = _key(tiny_folder, 32)
    assert list(results) == [key]
    lengths = [p.length for p in results[key].points]
    assert lengths == [1, 2, 4, 8, 12, 16, 20, 24, 28, 32]
    assert results[key].complete and page.session_state[cost_keys.COST_RACE].running is None
    labels = [m.label for m in page.metric]
    assert labels[:4] == ["Naive step at L = 32", "Cached step at L = 32", "Speed-up per step at L = 32", "Race took"]
    assert len(labels) == 4 + 3  # and the three roofs of section 3, nothing else
    assert labels[4:] == ["Copy bandwidth (read + write)", "Matmul peak (float32)",
                          "Ridge point"]
    assert page.get("download_button")  # the CSV of the measured table
    assert list(_frame(page, "naive_step_ms")["length"]) == lengths
    assert any(t.startswith("Generating **32 tokens**") for t in _texts(page, "markdown"))
    assert any(t.startswith("Fits to the measured step times:") for t in _texts(page, "markdown"))
    # revisiting: no new measurement, same numbers, button offers to run again
    before = results[key].seconds
    page.run()
    assert page.session_state[cost_keys.COST_RACE].results[key].seconds == before
    assert page.button(key=cost_keys.COST_RUN).label == "Run the race again"
    assert page.button(key=cost_keys.COST_RESUME).disabled  # nothing left to measure
    # changing the count input never touches the measurements
    page.number_input(key=cost_keys.COST_T).set_value(10)
    page.run()
    assert not page.exception
    assert any("T² = 100" in t for t in _texts(page, "markdown"))
    assert page.session_state[cost_keys.COST_RACE].results[key].seconds == before


def test_interrupted_race_is_kept_and_can_be_continued(page, tiny_folder):
    """A Stop click reruns the script mid-race; the next run keeps the points measured so far."""
    key = _key(tiny_folder, 16)
    state = cost.Race()
    state.running = cost.running(key, engine.sample_lengths(16), started=0.0,
                                 points=[engine.CostPoint(L, 1.0, 1.0 + L / 10, 3, 1, L - 1) for L in (1, 2, 4)])
    page.session_state[cost_keys.COST_RACE] = state
    page.select_slider(key=cost_keys.COST_MAX_LEN).set_value(16)
    page.run()
    assert not page.exception, page.exception
    assert any("Stopped early at length 4" in w for w in _texts(page, "warning"))
    kept = page.session_state[cost_keys.COST_RACE].results[key]
    assert kept.stopped_early and [p.length for p in kept.points] == [1, 2, 4]
    resume = page.button(key=cost_keys.COST_RESUME)
    assert not resume.disabled and resume.label == "Continue from L = 6"
    resume.click()
    page.run()
    assert not page.exception, page.exception
    done = page.session_state[cost_keys.COST_RACE].results[key]
    assert [p.length for p in done.points] == [1, 2, 4, 6, 8, 10, 12, 14, 16] and done.complete
    assert not any("Stopped early" in w for w in _texts(page, "warning"))


def test_interrupted_before_first_point(page):
    state = cost.Race()
    state.running = cost.running(cost.RaceKey("x", "cpu", "float32", 64), [1, 64], started=0.0)
    page.session_state[cost_keys.COST_RACE] = state
    page.run()
    assert not page.exception
    assert cost.NOTHING_MEASURED in _texts(page, "warning")


def test_section_3_asks_a_neutral_question_and_its_notice_is_read_from_the_measurement(page):
    from autoreg_ui import guide
    from autoreg_ui.lessons.cost import text as cost_text

    headers = [h.value for h in page.main.header]
    assert "3 · Is a decode step memory-bound?" in headers
    assert not any(h.startswith("3 · Why") for h in headers)
    shown = " ".join(_texts(page, "markdown"))
    stored_notice = cost_text.GUIDES["3 · Is a decode step memory-bound?"][0]
    assert stored_notice not in shown  # the measurement replaced it
    notice = next(m for m in _texts(page, "markdown") if m.startswith(f"**{guide.NOTICE}:** At L = "))
    said = notice.split("\n\n")[0]
    assert "FLOP per byte it reads" in said and "(measured now)" in said
    bound = next(m for m in _texts(page, "markdown") if "FLOP/byte, " in m and "decode step is **" in m)
    # the Notice and the section's verdict agree: both read the same intensity against the same ridge
    assert ("below this machine's ridge" in said) == ("**memory-bound**" in bound)
    assert cost_text.memory_notice.__doc__
