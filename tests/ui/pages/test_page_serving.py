"""The "How servers go fast" page under AppTest on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

import pytest

from autoreg_ui import keys as site_keys
from autoreg_ui import measuring
from autoreg_ui.lessons.serving import keys

PAGE = "pages/serving.py"

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------------------------------------------------------------- the page under AppTest
@pytest.fixture
def page(open_page):
    return open_page(PAGE, timeout=300)


def _columns(at) -> list[list[str]]:
    return [list(frame.value.columns) for frame in at.dataframe]


def test_page_before_any_measurement(page):
    assert page.title[0].value == "How servers go fast"
    assert [h.value for h in page.main.header] == ["1 · Batching: one weight read, many sequences",
                                              "2 · Static vs continuous batching", "3 · Speculative decoding",
                                              "4 · Precision: fewer bytes per weight"]
    for job in (keys.SRV_BATCH, keys.SRV_QUEUE, keys.SRV_SPEC, keys.SRV_PREC):
        assert not page.button(key=job.run).disabled and page.button(key=job.stop).disabled
    assert page.dataframe.len == 0 and page.number_input(key=keys.SRV_SPEC_LAYERS).value == 1
    assert any("Memory is shown in binary units" in c.value for c in page.caption)


def test_page_measures_each_idea(page):
    for job in (keys.SRV_BATCH, keys.SRV_QUEUE, keys.SRV_SPEC, keys.SRV_PREC, keys.SRV_DIAL):
        page.button(key=job.run).click().run()
        assert not page.exception, page.exception
    columns = _columns(page)
    assert columns[0] == ["batch", "ms per step", "tokens/s", "tokens/s ÷ batch 1", "MiB read per step",
                          "KV cache share of the bytes", "bandwidth floor (ms)"]
    assert columns[1][0] == "batching" and "mean time to first token (s)" in columns[1]
    assert any("draft acceptance rate" in c for c in columns)  # kept ÷ drafted, named as servers log it
    assert any("KL from float32 (bits)" in c and "stored as" in c for c in columns)
    text = " ".join(m.value for m in page.markdown)
    assert "One row:" in text and "Continuous batching served the queue" in text and "top-1 agreement" in text
    assert not [e.value for e in page.error]
    assert measuring.kept(page.session_state, keys.SRV_QUEUE.kept).complete


def test_the_live_panel_counts_this_servers_passes_and_this_tabs_last_step(page):
    from autoreg_core.runtime import batcher

    assert page.toggle(key=keys.SRV_LIVE_REFRESH).value  # live by default
    page.button(key=f"{keys.SRV_PAGE}_next").click().run()
    assert not page.exception, page.exception
    session = page.session_state[site_keys.SESSION]
    now = batcher.server_now(session.bundle)
    assert now.passes >= 1 and now.tokens >= 1 and now.since_start.tokens >= now.tokens
    metrics = {m.label: m.value for m in page.metric}
    shown = int(metrics["Decode passes, last minute"].replace(",", ""))
    # the page counted its minute a moment before this check: since then a pass can only have aged out of it
    assert now.passes <= shown <= now.since_start.passes and shown >= 1
    assert metrics["Your last step rode with"] == ("alone" if session.records[-1].pass_rows == 1 else
                                                   f"{session.records[-1].pass_rows - 1} other tab"
                                                   + ("s" if session.records[-1].pass_rows > 2 else ""))
    captions = [c.value for c in page.caption]
    assert f"Since this server started: {now.since_start.passes:,} pass" in " ".join(captions)
    assert "srv_live_chart" in [c.key for c in page.get("plotly_chart")]
    assert not any("Paused" in c for c in captions)
    page.toggle(key=keys.SRV_LIVE_REFRESH).set_value(False).run()  # the projector's pause
    assert not page.exception, page.exception
    assert any("Paused: these figures stay as they were" in c.value for c in page.caption)


def test_server_now_counts_passes_by_rows():
    from autoreg_core.runtime.batcher import PassRecord, ServerNow

    now = ServerNow(passes=3, tokens=9, window_s=60.0, by_rows={1: 1, 4: 2})
    assert now.tokens_per_s == pytest.approx(0.15) and now.shared_share == pytest.approx(8 / 9)
    assert PassRecord(0.0, 2, 5.0).rows == 2
