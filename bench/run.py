"""Measure the app's costs on this machine and print them as one JSON object.

    python -m bench            # or: python bench/run.py
    python -m bench --tokens 32 --lengths 64,256
    python -m bench --memory   # only the per-tab memory (a few minutes: 2 × 2,048 decode steps)
    python -m bench --memory --memory-tokens 128,512 --memory-attention
    python -m bench --serving  # only the serving page's figures (several minutes)

What the default run measures (about a minute on a quiet 2-core CPU):

* ``cold_start``: a fresh Python process imports ``autoreg_core`` and loads the embedded model from the
  converted cache (the conversion itself is done beforehand, so this is the every-day start);
* ``next_token``: per-token time of ``Session.step`` (what "Next token" runs) against bare
  ``model.generate`` in the same process, greedy, same prompt; the same with attention capture on;
* ``naive_vs_cached``: one cached decode step vs one full recompute at a few lengths
  (``autoreg_core.experiments.kv_cost.sweep``), the speedup, and each step's counts from ``bundle.spec``;
* ``machine``: CPU, threads, torch version, device, dtype; and the copy bandwidth / matmul peak.

``--serving`` measures instead what the serving page shows (``bench/serving.py``): decode-step time
for batch sizes 1–32, a queue served by static and by continuous batching, speculative decoding with
prompt lookup and the early-exit self-draft on two prompts, and fp32 / bf16 / int8 / fp8-cache side by side.

``--memory`` measures instead what one browser tab holds (``bench/memory.py``): a ``Session``
generating 512 and 2,048 tokens, greedy and sampled, reporting the bytes of its step records
(tensors by kind, the rest by pickle size) and, separately, its KV cache. ``--memory-attention``
turns attention capture on (what the attention page does).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/run.py` from anywhere
    sys.path.insert(0, str(ROOT))

PROMPT = "Once upon a time, in a small village by the sea, there lived an old baker who"

COLD_START_CODE = r"""
import json, time
t0 = time.perf_counter()
import autoreg_core
t1 = time.perf_counter()
bundle = autoreg_core.load_model()
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "load_model_reported_s": bundle.load_seconds}))
"""


def cold_start(runs: int = 1) -> dict:
    """Import + load in a fresh interpreter; wall time of the whole process too."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", COLD_START_CODE], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        data["process_wall_s"] = wall
        data["import_plus_load_s"] = data["import_s"] + data["load_s"]
        samples.append(data)
    best = min(samples, key=lambda d: d["import_plus_load_s"])
    return {k: round(v, 3) for k, v in best.items()} | {"runs": runs}


def _session_per_token(bundle, n: int, capture: bool) -> dict:
    from autoreg_core import SamplingConfig, Session

    config = SamplingConfig(temperature=0.0, max_new_tokens=n + 1)
    session = Session(bundle, PROMPT)  # timings are solo passes
    session.prefill(capture_attention=capture)
    times = []
    forward = []
    for _ in range(n):
        t0 = time.perf_counter()
        rec = session.step(config, capture_attention=capture)
        times.append((time.perf_counter() - t0) * 1000.0)
        forward.append(rec.forward_ms)
        if rec.stop is not None:
            break
    return {"tokens": len(times), "mean_ms": statistics.fmean(times), "median_ms": statistics.median(times),
            "forward_median_ms": statistics.median(forward)}


def _generate_per_token(bundle, n: int) -> dict:
    """(time for n new tokens − time for 1) / (n − 1): the decode steps alone, prefill removed."""
    import torch

    tok = bundle.tokenizer
    enc = tok(PROMPT, return_tensors="pt").to(bundle.device)
    pad = tok.pad_token_id if tok.pad_token_id is not None else (bundle.eos_token_ids or [0])[0]

    def run(k: int) -> float:
        t0 = time.perf_counter()
        with torch.inference_mode():
            bundle.model.generate(**enc, max_new_tokens=k, min_new_tokens=k, do_sample=False, pad_token_id=pad)
        return time.perf_counter() - t0

    run(2)  # warm-up
    t1 = min(run(1) for _ in range(2))
    tn = min(run(n) for _ in range(2))
    return {"tokens": n, "mean_ms": (tn - t1) / (n - 1) * 1000.0, "prefill_plus_one_ms": t1 * 1000.0}


def next_token(bundle, n: int) -> dict:
    out = {}
    _session_per_token(bundle, 4, False)  # warm-up
    gen = _generate_per_token(bundle, n)
    plain = _session_per_token(bundle, n, False)
    captured = _session_per_token(bundle, n, True)
    out["generate_per_token_ms"] = round(gen["mean_ms"], 2)
    out["session_step_per_token_ms"] = round(plain["mean_ms"], 2)
    out["session_step_median_ms"] = round(plain["median_ms"], 2)
    out["session_step_forward_median_ms"] = round(plain["forward_median_ms"], 2)
    out["ratio_session_vs_generate"] = round(plain["mean_ms"] / gen["mean_ms"], 3)
    out["capture_attention_per_token_ms"] = round(captured["mean_ms"], 2)
    out["capture_attention_median_ms"] = round(captured["median_ms"], 2)
    out["ratio_capture_vs_generate"] = round(captured["mean_ms"] / gen["mean_ms"], 3)
    out["tokens"] = min(plain["tokens"], captured["tokens"])
    return out


def naive_vs_cached(bundle, lengths: list[int]) -> dict:
    """Timed steps at each length, with what ``bundle.spec`` counts for them (FLOPs, bytes read)."""
    from autoreg_core.experiments import kv_cost as cost

    spec = bundle.spec
    result = cost.sweep(bundle, lengths)
    return {"points": [{"length": p.length, "cached_ms": round(p.cached_ms, 2), "naive_ms": round(p.naive_ms, 2),
                        "speedup": round(p.speedup, 2), "cached_flops": spec.flops_step(p.length, True),
                        "naive_flops": spec.flops_step(p.length, False),
                        "cached_bytes_read": spec.step_bytes(p.length)["total"],
                        "cached_arithmetic_intensity": round(spec.arithmetic_intensity(p.length, True), 3)}
                       for p in result.points],
            "prefill_ms_to_build_the_cache": round(result.prefill_ms, 1), "sweep_s": round(result.seconds, 2)}


def spec_summary(spec) -> dict:
    """The model's shape and the per-token numbers the pages show."""
    return {"layers": spec.n_layers, "heads": spec.n_heads, "kv_heads": spec.n_kv_heads, "head_dim": spec.head_dim,
            "hidden": spec.hidden, "vocab": spec.vocab, "params": spec.n_params, "body_params": spec.body_params,
            "weight_bytes_per_param": spec.weight_bytes_per_param,
            "cache_bytes_per_position": spec.cache_bytes_per_position,
            "weight_bytes_read_per_decode_step": spec.weight_bytes_per_step}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48, help="decode steps per next-token measurement")
    parser.add_argument("--lengths", default="64,256,512,1024", help="comma-separated lengths for naive vs cached")
    parser.add_argument("--skip-cold-start", action="store_true")
    parser.add_argument("--memory", action="store_true",
                        help="measure only the memory one tab holds (records and KV cache), a few minutes")
    parser.add_argument("--memory-tokens", default="512,2048", help="generated-token counts to measure at")
    parser.add_argument("--memory-attention", action="store_true", help="capture attention while generating")
    parser.add_argument("--serving", action="store_true",
                        help="measure only the serving page's figures (batching, continuous batching, "
                             "speculative decoding, precision), several minutes")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for --serving")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    from autoreg_core import load_model
    from autoreg_core.engine.model_spec import dtype_name
    from autoreg_core.experiments import kv_cost as cost

    bundle = load_model()  # converts the embedded model once if needed, so cold_start sees a warm cache
    report: dict = {"model": bundle.name, "device": str(bundle.device), "dtype": dtype_name(bundle.dtype),
                    "spec": spec_summary(bundle.spec), "machine": cost.machine_info(bundle.device),
                    "load_avg_at_start": cost.load_average()}
    if args.memory:
        from bench.memory import memory_report

        checkpoints = tuple(int(x) for x in args.memory_tokens.split(",") if x.strip())
        report["tab_memory"] = memory_report(bundle, PROMPT, checkpoints, args.memory_attention)
    elif args.serving:
        from bench.serving import measure_serving

        report["serving"] = measure_serving(bundle, threads=args.threads)
    else:
        if not args.skip_cold_start:
            report["cold_start"] = cold_start()
        report["next_token"] = next_token(bundle, max(2, args.tokens))
        report["naive_vs_cached"] = naive_vs_cached(bundle, [int(x) for x in args.lengths.split(",") if x.strip()])
        report["machine"]["copy_bandwidth_gib_s"] = round(cost.measure_bandwidth(bundle.device) / 2**30, 2)
        report["machine"]["matmul_gflop_s"] = round(cost.measure_matmul_flops(bundle.device, bundle.dtype) / 1e9, 1)
    report["load_avg_at_end"] = cost.load_average()
    report["bench_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
