"""bench/click_cost.py: its arithmetic, and one short run against the real servers (structure only)."""
from pathlib import Path

import pytest
from conftest import ROOT, in_own_thread

from bench import click_cost
from bench.lib.goals import CLICK_GOALS
from bench.lib.stats import percentile


def test_percentile_and_summary():
    assert percentile([], 50) is None
    assert percentile([30.0, 10.0, 20.0], 50) == 20.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0
    action = click_cost.Action("x", "app", "", "", None, latencies_ms=[10.0, 30.0, 20.0],
                               request_ms=[8.0, 28.0, 18.0], cpu_s=0.06, bytes_in=[900, 300, 500],
                               elements=42, strip_html=1234)
    assert click_cost.summary(action) == {"clicks": 3, "p50_ms": 20.0, "p95_ms": 30.0, "mean_ms": 20.0,
                                          "request_to_settled_p50_ms": 18.0, "server_cpu_ms_per_click": 20.0,
                                          "lost_clicks_redone": 0, "bytes_sent_per_click_p50": 500,
                                          "elements_on_page": 42, "token_strip_html_chars": 1234}


def test_compare_gives_ratios_and_checks_the_goals():
    bare = {"p50_ms": 100.0, "p95_ms": 200.0, "server_cpu_ms_per_click": 10.0}
    page = {"p50_ms": 150.0, "p95_ms": 500.0, "server_cpu_ms_per_click": 30.0}
    assert click_cost.compare(page, bare, (1.5, 2.0)) == {
        "latency_p50_ratio": 1.5, "latency_p95_ratio": 2.5, "server_cpu_ratio": 3.0,
        "goal_latency_p50_ratio": 1.5, "goal_server_cpu_ratio": 2.0, "goal_met": False}
    assert click_cost.compare(page, bare, (2.0, None))["goal_met"] is True
    assert click_cost.compare({"p50_ms": None}, bare, (2.0, None))["goal_met"] is False


def test_every_app_action_has_a_goal():
    names = [a.name for a in click_cost.actions() if a.server == "app"]
    assert sorted(names) == sorted(CLICK_GOALS)
    assert len(names) == 5


@pytest.mark.e2e
def test_one_click_per_page_gives_the_json_shape():
    if not Path(click_cost.CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    report = in_own_thread(click_cost.run, clicks=1, warmup=0, rounds=1, options=[], only=["step_next_token"])
    assert sorted(report) == ["bare_page", "bare_page_streamlit_defaults", "bare_step_shape", "pages"]
    assert list(report["pages"]) == ["step_next_token"]
    step = report["pages"]["step_next_token"]
    assert step["clicks"] == 1 and step["p50_ms"] > 0 and step["server_cpu_ms_per_click"] >= 0
    assert step["bytes_sent_per_click_p50"] > 0 and step["elements_on_page"] > 0
    assert step["token_strip_html_chars"] > 0 and report["bare_page"]["token_strip_html_chars"] > 0
    assert sorted(step["vs_bare"]) == ["goal_latency_p50_ratio", "goal_met", "goal_server_cpu_ratio",
                                       "latency_p50_ratio", "latency_p95_ratio", "server_cpu_ratio"]
    assert report["bare_page"]["clicks"] == 1 and report["bare_page_streamlit_defaults"]["clicks"] == 1


def test_same_elements_reads_a_page_against_the_step_shape_floor():
    page = {"server_script_thread_cpu_p50_ms": 12.0, "server_cpu_ms_per_click": 90.0, "p50_ms": 150.0,
            "elements_on_page": 60}
    shape = {"server_script_thread_cpu_p50_ms": 8.0, "server_cpu_ms_per_click": 9.0, "p50_ms": None,
             "elements_on_page": 50}
    assert click_cost.same_elements(page, shape) == {
        "server_script_thread_cpu_ratio": 1.5, "server_cpu_ratio": 10.0, "latency_p50_ratio": None,
        "elements_on_page": 60, "bare_step_shape_elements_on_page": 50}
    judged = click_cost.same_elements(page, shape, 1.5)  # 12 / 8 = 1.5: at the goal, met
    assert (judged["goal_server_script_thread_cpu_ratio"], judged["goal_met"]) == (1.5, True)
    assert click_cost.same_elements({**page, "server_script_thread_cpu_p50_ms": 12.1}, shape, 1.5)["goal_met"] is False


def _shape(node) -> list[str]:
    """Element kinds, depth first, of the stepper fragment's block: the one holding the step row (a block of
    columns) and, somewhere below, the view's tabs."""
    def kids(n) -> list:
        children = getattr(n, "children", None)
        return list(children.values()) if isinstance(children, dict) else []

    def walk(n, depth):
        out = [f"{depth}:{getattr(n, 'type', type(n).__name__)}"]
        for child in kids(n):
            out += walk(child, depth + 1)
        return out

    def has_tabs(n) -> bool:
        return any(getattr(k, "type", "") == "tab_container" or has_tabs(k) for k in kids(n))

    def holds_row(n) -> bool:
        return any(getattr(k, "type", "") == "flex_container"
                   and any(getattr(c, "type", "") == "column" for c in kids(k)) for k in kids(n))

    def holder(n):
        if holds_row(n) and has_tabs(n):
            return n
        return next((found for k in kids(n) if (found := holder(k)) is not None), None)

    return walk(holder(node), 0)


@pytest.mark.integration
def test_the_step_shape_floor_draws_what_the_step_page_draws_per_click(embedded):
    """The floor stays fair: its page draws the same element kinds in the same nesting as the step page's fragment
    after one Next token click (if the step page changes shape, this fails and the floor must follow)."""
    from streamlit.testing.v1 import AppTest

    step = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    step.switch_page("pages/step.py")
    step.run()
    step.button(key="step_next").click().run()
    floor = AppTest.from_file(str(ROOT / "bench" / "bare_step_shape.py"), default_timeout=60)
    floor.run()
    floor.button(key="bare_next").click().run()
    assert not step.exception and not floor.exception
    mine, theirs = _shape(step._tree), _shape(floor._tree)
    assert len(mine) == len(theirs) == 36
    assert mine == theirs
