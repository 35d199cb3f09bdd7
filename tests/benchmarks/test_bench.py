"""What the bench reports and in what shape, on the tiny model (no speed thresholds: the bench reports times)."""
from __future__ import annotations

import math
import subprocess
import sys

import torch
from conftest import ROOT
from fake_runner import fake_script_runner

from autoreg_core.engine.session import FULL_LOGITS_KEPT, TOP_STORED
from bench import memory, run

GENERATOR_STATE_BYTES = torch.Generator().get_state().numel()  # 5,056 bytes on CPU


def test_next_token_report_on_tiny(tiny):
    out = run.next_token(tiny, 4)
    assert set(out) == {"generate_per_token_ms", "session_step_per_token_ms", "session_step_median_ms",
                        "session_step_forward_median_ms", "ratio_session_vs_generate",
                        "capture_attention_per_token_ms", "capture_attention_median_ms", "ratio_capture_vs_generate",
                        "tokens"}
    assert all(isinstance(v, float) and math.isfinite(v) for k, v in out.items() if k != "tokens")  # no timing claim
    assert out["tokens"] in range(1, 5)


def test_naive_vs_cached_report_carries_the_spec_counts(tiny):
    out = run.naive_vs_cached(tiny, [16, 4])
    assert [p["length"] for p in out["points"]] == [4, 16]
    V = tiny.spec.vocab
    # the tiny model: 2·74,048 weights-FLOPs per position + 2·64·V for the logits + 4·2·4·16 per cached key
    assert [p["cached_flops"] for p in out["points"]] == [148_096 + 128 * V + 512 * L for L in (4, 16)]
    assert [p["naive_flops"] for p in out["points"]] == [L * 148_096 + 128 * V + 512 * L * (L + 1) // 2
                                                         for L in (4, 16)]
    assert [p["cached_bytes_read"] for p in out["points"]] == [(74_048 + 64 * V) * 4 + 512 * L for L in (4, 16)]
    assert all(p["cached_ms"] > 0 and p["naive_ms"] > 0 for p in out["points"])
    assert set(out) == {"points", "prefill_ms_to_build_the_cache", "sweep_s"}


def test_spec_summary(tiny):
    summary = run.spec_summary(tiny.spec)
    assert (summary["layers"], summary["heads"], summary["kv_heads"], summary["head_dim"]) == (2, 4, 2, 16)
    assert (summary["body_params"], summary["cache_bytes_per_position"]) == (74_048, 512)


def test_tab_memory_on_tiny_reaches_every_checkpoint(tiny):
    """Each checkpoint is reached exactly (EOS steps replaced), with the record bytes counted by kind."""
    out = memory.tab_memory(tiny, "The cat sat", checkpoints=(8, 40))
    snaps = out["checkpoints"]
    assert [s["generated_tokens"] for s in snaps] == [8, 40]
    assert [s["records_with_full_logits"] for s in snaps] == [8, FULL_LOGITS_KEPT]
    V, prompt = tiny.spec.vocab, out["prompt_tokens"]
    assert [s["record_bytes"]["logits"] for s in snaps] == [8 * V * 4, FULL_LOGITS_KEPT * V * 4]
    # top ids (int32) + raw and filtered probabilities (float32) of TOP_STORED tokens per record
    assert [s["record_bytes"]["top_tokens"] for s in snaps] == [n * TOP_STORED * 12 for n in (8, 40)]
    assert [s["record_bytes"]["generator_states"] for s in snaps] == [0, 0]  # greedy: nothing drawn
    assert [s["kv_cache_positions"] for s in snaps] == [prompt + 8, prompt + 40]
    assert [s["kv_cache_bytes"] for s in snaps] == [s["kv_cache_formula_bytes"] for s in snaps]
    assert [s["kv_cache_bytes"] for s in snaps] == [512 * (prompt + 8), 512 * (prompt + 40)]
    for s in snaps:
        rb = s["record_bytes"]
        assert rb["tensors_total"] == rb["logits"] + rb["top_tokens"] + rb["generator_states"] + rb["attention"]
        assert rb["rest_pickled"] > 0 and rb["total"] == rb["tensors_total"] + rb["rest_pickled"]
        assert s["tab_bytes_without_kv_cache"] == rb["total"] + V * 4  # + the pending logits


def test_sampled_records_keep_their_generator_state(tiny):
    from autoreg_core import SamplingConfig

    out = memory.tab_memory(tiny, "The cat sat", (6,), SamplingConfig(temperature=1.0, seed=1, max_new_tokens=6))
    [snap] = out["checkpoints"]
    forced = out["eos_steps_replaced_by_forced_token"]  # a forced token draws nothing, so keeps no state
    assert snap["record_bytes"]["generator_states"] == (6 - forced) * GENERATOR_STATE_BYTES


def test_memory_report_structure(tiny):
    out = memory.memory_report(tiny, "The cat sat", checkpoints=(4,))
    assert set(out["runs"]) == {"greedy", "sampled"}
    assert [r["config"]["temperature"] for r in out["runs"].values()] == [0.0, 1.0]
    assert out["goal_mib_per_tab_without_kv_cache"] == 30 and "pickle" in out["method"]
    assert [[s["generated_tokens"] for s in r["checkpoints"]] for r in out["runs"].values()] == [[4], [4]]
    assert out["within_goal"] is True and 0 < out["worst_tab_mib_without_kv_cache"] < 1  # a 400-token vocabulary


def test_help_runs_without_loading_anything():
    proc = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    assert "--lengths" in proc.stdout and "--memory" in proc.stdout and "--memory-tokens" in proc.stdout


def test_serving_report_on_tiny_has_every_table(tiny):
    from bench.serving import measure_serving

    out = measure_serving(tiny, threads=1, largest_batch=4)
    assert [row["batch"] for row in out["batching"]] == [1, 2, 4]
    assert [row["batching"] for row in out["static_vs_continuous"]] == ["static", "continuous"]
    assert all(row["requests served"] == "10 of 10" for row in out["static_vs_continuous"])
    assert len(out["speculative"]) == 6 and all(row["same tokens as plain"] for row in out["speculative"])
    assert [row["stored as"] for row in out["precision"]] == ["float32", "bfloat16", "int8", "int8 weights only (Q8_0)",
                                                          "float32 + fp8 KV cache"]
    assert out["torch_threads"] == 1 and out["copy_bandwidth_gib_s"] > 0


# ---------------------------------------------------------------- bench.classroom's capacity fields
def test_run_log_lines_parse_with_and_without_a_trigger():
    from bench.lib import server_hooks

    text = "12.500 3.250 1 step_next\n5.000 1.000 0\n\n7.000 2.000 1 bare_next\n"
    runs = server_hooks.parse_runs(text)
    assert runs == [(12.5, 3.25, 1, "step_next"), (5.0, 1.0, 0, "-"), (7.0, 2.0, 1, "bare_next")]
    assert server_hooks.cpu_of(runs, "step_next") == [3.25]
    assert server_hooks.cpu_of(runs, "bare_next") == [2.0]
    assert server_hooks.cpu_of(runs, "step_undo") == []


def test_cpu_comparison_is_the_ratio_of_medians_against_the_goal():
    from bench.lib import goals

    out = goals.cpu_comparison([10.0, 30.0, 12.0], [4.0, 6.0, 5.0, 100.0])
    assert out == {"step_next_token_cpu_ms": 12.0, "bare_next_token_cpu_ms": 5.5, "clicks": [3, 4],
                   "ratio": 2.18, "goal_ratio": 1.5, "meets_goal": False}
    at_goal = goals.cpu_comparison([6.0], [4.0])
    assert (at_goal["ratio"], at_goal["meets_goal"]) == (1.5, True)  # the goal is ≤ 1.5×: exactly 1.5× meets it
    assert goals.cpu_comparison([6.01], [4.0])["meets_goal"] is False
    empty = goals.cpu_comparison([], [4.0])
    assert (empty["step_next_token_cpu_ms"], empty["ratio"], empty["meets_goal"]) == (None, None, None)


def test_p95_goal_reads_the_p95_against_the_solo_step():
    from bench.lib import goals

    assert goals.p95_goal(300.0, 800.0, 100.0) == {
        "solo_decode_step_ms": 100.0, "next_token_p50_ms": 300.0, "next_token_p95_ms": 800.0,
        "p95_over_solo": 8.0, "goal_ratio": 8.0, "meets_goal": True}
    assert goals.p95_goal(300.0, 801.0, 100.0)["meets_goal"] is False
    assert goals.p95_goal(None, None, 100.0)["meets_goal"] is None


def test_classroom_goals_split_the_runs_at_the_class_start():
    from bench import classroom

    app = [(90.0, 20.0, 1, "step_next"), (90.0, 22.0, 1, "step_next"), (5.0, 4.0, 1, "step_undo"),
           (95.0, 30.0, 1, "step_next"), (95.0, 34.0, 1, "step_next"), (96.0, 32.0, 1, "step_next")]
    bare = [(4.0, 4.0, 1, "bare_next"), (4.0, 6.0, 1, "bare_next"), (4.0, 8.0, 1, "bare_next")]
    report = {"response_time_by_action": {classroom.NEXT: {"n": 5, "p50_ms": 400.0, "p95_ms": 900.0}},
              "server_rss": {"after_warmup_slope_mib_per_min": 1.5}}
    out = classroom.goals(report, 100.0, app, bare, {"app": 3, "bare": 2}, "1")
    cpu = out["server_cpu_per_click_beyond_model"]
    assert (cpu["alone"]["step_next_token_cpu_ms"], cpu["alone"]["bare_next_token_cpu_ms"]) == (21.0, 5.0)
    assert (cpu["alone"]["clicks"], cpu["alone"]["ratio"]) == ([2, 2], 4.2)
    assert "meets_goal" not in cpu["alone"]  # the bare page is read for information: the goal's floor is the shape
    assert (cpu["during_class"]["step_next_token_cpu_ms"], cpu["during_class"]["bare_next_token_cpu_ms"]) == (32.0, 8.0)
    assert (cpu["during_class"]["clicks"], cpu["during_class"]["ratio"]) == ([3, 1], 4.0)
    assert "note" not in cpu
    assert out["next_token_vs_solo_step"]["p95_over_solo"] == 9.0
    assert out["next_token_vs_solo_step"]["meets_goal"] is False
    assert out["memory_slope_mib_per_min"] == 1.5
    assert "server_cpu_per_click_against_the_step_shape" not in out
    shape = [(4.0, 10.0, 1, "bare_next"), (4.0, 16.0, 1, "bare_next")]
    both = classroom.goals(report, 100.0, app, bare, {"app": 3, "bare": 2, "bare_shape": 1}, "1", shape_runs=shape)
    assert both["server_cpu_per_click_beyond_model"] == cpu
    assert both["server_cpu_per_click_against_the_step_shape"] == {
        "alone": {"step_next_token_cpu_ms": 21.0, "bare_next_token_cpu_ms": 10.0, "clicks": [2, 1], "ratio": 2.1,
                  "goal_ratio": 1.5, "meets_goal": False},
        "during_class": {"step_next_token_cpu_ms": 32.0, "bare_next_token_cpu_ms": 16.0, "clicks": [3, 1],
                         "ratio": 2.0, "goal_ratio": 1.5, "meets_goal": False}}
    near = [(4.0, 14.0, 1, "bare_next"), (4.0, 21.0, 1, "bare_next")]  # 21 / 14 = 1.5: met; 32 / 21 > 1.5
    edge = classroom.goals(report, 100.0, app, bare, {"app": 3, "bare": 2, "bare_shape": 1}, "1", shape_runs=near)
    shape_cpu = edge["server_cpu_per_click_against_the_step_shape"]
    assert (shape_cpu["alone"]["meets_goal"], shape_cpu["during_class"]["meets_goal"]) == (True, False)
    unbatched = classroom.goals(report, 100.0, app, bare, {"app": 3, "bare": 2}, "0")
    assert "model's pass" in unbatched["server_cpu_per_click_beyond_model"]["note"]


def test_prefix_cache_field_reads_the_tricks_page_metrics():
    from autoreg_ui.lessons.tricks.text import prefix_stat_labels, prefix_stats
    from bench import capacity

    labels = prefix_stat_labels()
    metrics = dict(zip(labels, prefix_stats(1_234, 2, 2_560.0, 427_008)))  # the words the page shows
    out = capacity.prefix_cache_counts(metrics, labels)
    assert (out["hits"], out["misses"]) == (1_234, 2)
    assert out["hit_rate"] == round(1_234 / 1_236, 3)
    assert out["shown"] == metrics and list(out["shown"]) == list(labels)
    assert (out["prefill_time_saved"], out["memory_held"]) == (metrics[labels[2]], metrics[labels[3]])
    none_yet = capacity.prefix_cache_counts(dict(zip(labels, prefix_stats(0, 0, 0.0, 0))), labels)
    assert (none_yet["hits"], none_yet["misses"], none_yet["hit_rate"]) == (0, 0, None)
    missing = capacity.prefix_cache_counts({}, labels)  # the page could not be read
    assert (missing["hits"], missing["misses"], missing["shown"]) == (None, None, {})


def test_the_run_timer_logs_the_button_that_started_each_run(tmp_path):
    import os
    import subprocess
    import sys

    from bench.lib import server_hooks

    env = {**os.environ, **server_hooks.timer_env(tmp_path / "timer", "app")}
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(fake_script_runner(tmp_path))])
    code = ("from types import SimpleNamespace as N\nfrom streamlit.runtime.scriptrunner import script_runner as s\n"
            "class W(N):\n    def WhichOneof(self, _):\n        return self.kind\n"  # a widget state, as the proto's
            "w = N(widgets=[W(id='$$ID-abc-cfg_seed', kind='int_value', trigger_value=False),\n"
            "               W(id='$$ID-0f1e-step_undo', kind='trigger_value', trigger_value=False),\n"
            "               W(id='$$ID-0f1e-step_next', kind='trigger_value', trigger_value=True)])\n"
            "s.ScriptRunner()._run_script(N(fragment_id_queue=['f'], widget_states=w))\n"
            "s.ScriptRunner()._run_script(N(widget_states=None))")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=tmp_path)
    runs = server_hooks.read_runs(tmp_path / "timer", "app")
    assert [(f, key) for _, _, f, key in runs] == [(1, "step_next"), (0, "-")]
    assert all(w >= 0 and c >= 0 for w, c, _, _ in runs)


def test_a_bench_server_installs_the_hooks_its_environment_names_timer_first(monkeypatch):
    from types import SimpleNamespace

    from bench.lib import in_server

    calls = []
    monkeypatch.setattr(in_server.importlib, "import_module",
                        lambda name: SimpleNamespace(install=lambda arg: calls.append((name.rsplit(".", 1)[1], arg))))
    env = {in_server.PROFILE: "p.prof", in_server.RUN_LOG: "runs.log", in_server.PROFILE_DIR: ""}
    assert in_server.install_from_environ(env) == ["run_timer", "run_profiler"]
    assert calls == [("run_timer", "runs.log"), ("run_profiler", "p.prof")]
    assert in_server.install_from_environ({}) == []
