"""The "How servers go fast" page: its controller (turn-taking, kept results, what it says) without
AppTest, its figures, and the page itself under AppTest on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from autoreg_core import SamplingConfig, scheduler, speculative
from autoreg_ui import keys, measuring, messages, serving, serving_text
from autoreg_ui.figures import serving as figs
from tiny import tiny_bundle

PAGE = "pages/6_serving.py"

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------------------------------------------------------------- one measurement at a time per server
@contextmanager
def held_by_another_tab(label: str, seconds: float = 10.0):
    """Another tab holds the server's measuring slot until the block ends (or ``seconds`` pass)."""
    holding, release = threading.Event(), threading.Event()

    def other_tab():
        with measuring.turn(label):
            holding.set()
            release.wait(seconds)

    thread = threading.Thread(target=other_tab)
    thread.start()
    holding.wait(seconds)
    try:
        yield release
    finally:
        release.set()
        thread.join(seconds)


def test_a_second_measurement_waits_in_line_and_says_so():
    waited = []
    with held_by_another_tab("batching curve") as release:
        assert measuring.running_now() == "batching curve"
        threading.Timer(1.5, release.set).start()
        with measuring.turn("precision table", on_wait=waited.append):
            assert measuring.running_now() == "precision table"
    assert measuring.running_now() is None
    assert waited and "Another measurement is running on this server (batching curve" in waited[0]
    assert "yours is queued" in waited[0]


def test_waiting_too_long_gives_up_with_a_message():
    state, ran = {}, []
    with held_by_another_tab("speculative decoding"):
        with pytest.raises(measuring.Busy, match="Waited 0 s"):
            with measuring.turn("mine", limit_s=0.2):
                ran.append("turn")
        found = measuring.measure(state, "k", "mine", (), lambda f, stop: ran.append("measure"), wait_s=0.2)
    assert ran == [] and found.failed and not found.done
    assert messages.take(state) == [("warning", "Waited 0 s for the measurement in progress (speculative decoding); "
                                                "please try again in a minute.")]


def test_measure_keeps_results_and_says_how_it_ended():
    state = {}

    def work(found, should_stop):
        found.result = [1, 2]
        return True

    found = measuring.measure(state, "k", "label", ("model a", 16), work)
    assert measuring.kept(state, "k", ("model a",), prefix=True) is found and found.done and found.complete
    assert measuring.kept(state, "k", ("model b",), prefix=True) is None and measuring.status(found, cores=1_000_000) == []
    budget = measuring.measure(state, "k", "label", ("a",), lambda f, stop: not stop(), budget_s=-1)
    assert budget.done and not budget.complete
    assert measuring.status(budget, cores=1_000_000) == [
        "The 150 s time budget ran out (the machine is busy): only part was measured."]
    budget.load = 9.5
    assert "busy during this measurement (load average 9.5 on 2 cores)" in measuring.status(budget, cores=2)[1]


def test_a_stop_click_keeps_what_was_measured():
    """Streamlit interrupts a run by raising a BaseException (StopException) at the next progress call."""
    class Interrupted(BaseException):
        pass

    state = {}

    def work(found, should_stop):
        found.result = ["first point"]
        raise Interrupted

    with pytest.raises(Interrupted):
        measuring.measure(state, "k", "label", (), work)
    found = measuring.kept(state, "k")
    assert found.result == ["first point"] and not found.done
    assert measuring.status(found, cores=1_000_000) == [
        "Stopped before the end: what was measured is shown; run again for the rest."]
    assert measuring.running_now() is None  # the line moves on


def test_bad_input_and_failures_become_messages():
    state = {}
    measuring.measure(state, "k", "label", (), lambda f, stop: serving.demo_queue(tiny_bundle(), 99, 8))
    measuring.measure(state, "j", "label", (), lambda f, stop: 1 / 0)
    said = messages.take(state)
    assert said[0] == ("error", "Queue 1 to 16 requests; got 99.")
    assert said[1][0] == "error" and "ZeroDivisionError" in said[1][1]
    assert measuring.kept(state, "k").failed and measuring.status(measuring.kept(state, "k"), cores=1) == []


# ---------------------------------------------------------------- what the controller measures and says
def test_demo_queue_varies_prompts_and_answers(tiny):
    requests = serving.demo_queue(tiny, 10, 32)
    assert [r.rid for r in requests] == list(range(10))
    assert [r.max_new for r in requests] == [32, 5, 16, 26, 8, 19, 3, 13, 32, 5]
    assert len({len(r.prompt_ids) for r in requests}) > 3
    with pytest.raises(ValueError, match="1 to 64 tokens"):
        serving.demo_queue(tiny, 4, 65)


def test_serving_work_serves_both_ways_with_the_same_tokens(tiny):
    state, progress = {}, []
    work = serving.serving_work(tiny, 5, 2, 8, lambda f, t: progress.append(f))
    found = measuring.measure(state, "q", "queue", (), work)
    assert found.complete and set(found.result) == set(scheduler.POLICIES)
    rows = serving.serving_rows(found.result)
    assert [r["batching"] for r in rows] == list(scheduler.POLICIES)
    assert [r["tokens"] for r in rows] == [sum(r.max_new for r in serving.demo_queue(tiny, 5, 8))] * 2
    per_request = serving.request_rows(found.result, tiny.tokenizer)
    assert len(per_request) == 5 and all(r["same tokens both ways"] is True for r in per_request)
    assert progress == sorted(progress) and 0 < progress[-1] <= 1
    assert serving_text.serving_sentences(found.result)[0].startswith("Continuous batching served the queue")
    for run in found.result.values():
        assert len(figs.timeline_figure(run).data) == 3
    assert len(figs.waits_figure(found.result).data) == 4


def test_speculative_work_reports_every_draft_on_both_prompts(tiny):
    state = {}
    work = serving.speculative_work(tiny, [speculative.PROMPT_LOOKUP, speculative.EARLY_EXIT], 1, 3, 12,
                                    SamplingConfig(temperature=0.0), lambda f, t: None)
    found = measuring.measure(state, "s", "spec", (), work)
    assert found.complete and [c.label for c in found.result] == list(serving.SPEC_PROMPTS)
    rows = serving.speculative_rows(found.result)
    assert len(rows) == 2 * 3 and all(r["same tokens as plain"] is True for r in rows)
    case = found.result[0]
    for run in case.runs:
        text = serving_text.speculative_sentence(case, run)
        speedup = case.plain.ms / run.ms  # the verdict the measured times imply, and only that one
        verdict = f"**{speedup:.2f}× faster**." if speedup >= 1 else f"**{speedup:.2f}×, slower**: "
        assert text.startswith(f"**{run.draft}** on “{case.label}”: ") and verdict in text
        assert ("faster**" in text) == (speedup >= 1) and ("slower**" in text) == (speedup < 1)
        assert len(serving.round_rows(run, tiny.tokenizer)) == len(run.rounds)
        assert len(figs.rounds_figure(run).data) == 3


def test_precision_and_dial_work(tiny):
    state = {}
    found = measuring.measure(state, "p", "precision", (), serving.precision_work(tiny, lambda f, t: None))
    assert found.complete and [r.variant for r in found.result] == list(serving.precision.VARIANTS)
    table = serving.precision_rows(found.result, 10e9, tiny.tokenizer)
    assert [r["stored as"] for r in table] == list(serving.precision.VARIANTS)
    assert table[0]["KL from float32 (bits)"] == 0.0
    assert len(serving_text.precision_sentences(found.result)) == 3
    dial = measuring.measure(state, "d", "dial", (), serving.dial_work(tiny, 32, lambda f, t: None))
    assert [bits for bits, _ in dial.result] == list(serving.DIAL_BITS)
    label = next(iter(serving_text.GROUPINGS))
    fallen = [bits for bits, q in dial.result if q.top1 < serving_text.COLLAPSE_TOP1]
    expected = (f"**{label}**: top-1 agreement falls below 90% at **{max(fallen)} bits**" if fallen else
                f"**{label}**: top-1 agreement stays above 90% down to {min(serving.DIAL_BITS)} bits")
    sentence = serving_text.dial_sentence({label: dial.result})
    assert sentence.startswith(expected) and sentence.endswith(".")
    assert len(figs.dial_figure({"blocks": dial.result}).data) == 2


def test_batching_work_and_sentences(tiny):
    state = {}
    found = measuring.measure(state, "b", "batching", (), serving.batching_work(tiny, 4, lambda f, t: None))
    assert [p.batch for p in found.result.points] == [1, 2, 4]
    rows = serving.batching_rows(found.result, tiny.spec, 10e9)
    assert [r["batch"] for r in rows] == [1, 2, 4] and rows[0]["tokens/s ÷ batch 1"] == 1.0
    lines = serving_text.batching_sentences(found.result, tiny.spec, 10e9, 50e9)
    assert lines[0].startswith("One row:") and "4 rows" in lines[0]
    assert len(figs.batching_figure(found.result, tiny.spec, 10e9).data) == 3
    assert len(figs.batching_figure(found.result, tiny.spec, 10e9, 50e9).data) == 4
    assert len(figs.bytes_figure(tiny.spec, [1, 2, 4], 32).data) == 2


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
    assert any("acceptance rate" in c for c in columns)
    assert any("KL from float32 (bits)" in c and "stored as" in c for c in columns)
    text = " ".join(m.value for m in page.markdown)
    assert "One row:" in text and "Continuous batching served the queue" in text and "top-1 agreement" in text
    assert not [e.value for e in page.error]
    assert measuring.kept(page.session_state, keys.SRV_QUEUE.kept).complete
