"""What the bench reports and in what shape, on the tiny model (no speed thresholds: the bench reports times)."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import torch

from autoreg_core.session import FULL_LOGITS_KEPT, TOP_STORED
from bench import memory, run

ROOT = Path(__file__).resolve().parents[1]
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
