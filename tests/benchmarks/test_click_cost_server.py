"""bench/click_cost.py's server side: the run timer a bench server loads, and the in-process (AppTest) runs."""
import os
import subprocess
import sys

import pytest
from fake_runner import fake_script_runner

from bench import click_cost
from bench.lib.server_hooks import timer_env


def test_the_run_timer_times_every_script_run_into_its_log(tmp_path):
    env = {**os.environ, **timer_env(tmp_path, "app")}
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(fake_script_runner(tmp_path))])
    code = ("from types import SimpleNamespace as N\nfrom streamlit.runtime.scriptrunner import script_runner as s\n"
            "s.ScriptRunner()._run_script(N(fragment_id_queue=['f']))\ns.ScriptRunner()._run_script(N())")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp_path)
    runs = click_cost._runs(tmp_path, "app")
    assert [f for _, _, f in runs] == [1, 0] and all(w >= 0 and c >= 0 for w, c, _ in runs)
    assert click_cost._runs(tmp_path, "nobody") == []


def test_a_summary_reports_the_servers_runs_when_it_timed_them():
    action = click_cost.Action("x", "app", "", "", None, latencies_ms=[10.0, 30.0], request_ms=[8.0, 28.0],
                               cpu_s=0.04, bytes_in=[900, 300], server_ms=[6.0, 7.0],
                               runs=[(20.0, 5.0, 1), (40.0, 7.0, 1)])
    out = click_cost.summary(action)
    assert out["request_to_last_message_p50_ms"] == 6.0 and out["server_script_runs_per_click"] == 1.0
    assert out["server_script_wall_p50_ms"] == 20.0 and out["server_script_thread_cpu_p50_ms"] == 5.0
    assert out["server_script_fragment_runs"] == 2


def test_the_bare_page_run_in_process_says_what_a_click_sends():
    out = click_cost.script_cost(clicks=2, warmup=1, only=[])  # only=[]: the two floors alone (no model)
    bare, shape = out["bare_next_token"], out["bare_step_shape_next_token"]
    assert list(out) == ["bare_next_token", "bare_step_shape_next_token"] and bare["clicks"] == shape["clicks"] == 2
    assert shape["elements"] == 21 and list(shape["figures"]) == ["bare_chart"]  # the title and the fragment's 20
    assert "vs_bare" not in shape and "vs_bare_step_shape" not in bare  # floors are not read against each other
    assert bare["elements"] == 5 and bare["figure_json_bytes"] > 1000 and list(bare["figures"]) == ["bare_chart_3"]
    assert bare["token_strip_html_chars"] > 0 and bare["script_wall_p50_ms"] > 0


@pytest.mark.integration
def test_the_step_page_run_in_process_is_the_step_page_not_start_here():
    """A bare / opens Start here (no Next token): the in-process run must open the step page by its file."""
    out = click_cost.script_cost(clicks=1, warmup=0, only=["step_next_token"])
    step = out["step_next_token"]
    assert list(out) == ["bare_next_token", "bare_step_shape_next_token", "step_next_token"] and step["clicks"] == 1
    assert set(step["vs_bare"]) == set(step["vs_bare_step_shape"]) and step["vs_bare_step_shape"]["elements"] > 1
    assert step["model_pass_p50_ms"] > 0 and step["token_strip_html_chars"] > 0 and step["figure_json_bytes"] > 1000
