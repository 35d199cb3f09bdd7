"""Naive vs KV cache: the quadratic-vs-linear argument, measured live on the loaded model."""
from __future__ import annotations

import os
import time

import pandas as pd
import streamlit as st

from autoreg_core import cost
from autoreg_ui.figures import cost as figs
from autoreg_ui.state import current_bundle

RESULTS_KEY = "cost_results"  # {cache key: SweepResult.to_dict()}: finished (or stopped) sweeps
PARTIAL_KEY = "cost_partial"  # the sweep in progress; every measured point lands here as it arrives
LENGTH_CHOICES = [16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2048]
TIME_BUDGET_S = 180.0  # a sweep never runs longer than this, whatever the machine's load


def _si(x: float, unit: str = "") -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= factor:
            return f"{x / factor:,.2f} {prefix}{unit}"
    return f"{x:,.0f} {unit}".strip()


def _signed(x: float, spec: str) -> str:
    return f"{'−' if x < 0 else '+'} {abs(x):{spec}}"


def _ms(x: float) -> str:
    return f"{x:,.1f} ms" if x < 10_000 else f"{x / 1000:,.2f} s"


def _cache_key(bundle, max_len: int) -> str:
    return f"{bundle.name}|{bundle.device}|{str(bundle.dtype).replace('torch.', '')}|{max_len}"


def _finish_interrupted() -> None:
    """A sweep still marked running belongs to an earlier script run that was interrupted (the Stop
    button, or any other click, reruns the page): keep what it measured as a stopped-early result."""
    partial = st.session_state.get(PARTIAL_KEY)
    if not partial or partial.get("status") != "running":
        return
    partial["status"] = "stopped"
    if partial["points"]:
        result = cost.SweepResult(model=partial["model"], device=partial["device"], dtype=partial["dtype"],
                                  lengths=partial["lengths"],
                                  points=[cost.CostPoint(**p) for p in partial["points"]],
                                  stopped_early=True, seconds=time.perf_counter() - partial["started"],
                                  load_avg=cost.load_average(), cpu_count=os.cpu_count())
        st.session_state.setdefault(RESULTS_KEY, {})[partial["key"]] = result.to_dict()
    else:
        st.session_state["cost_message"] = "The race was stopped before the first length was measured."
    del st.session_state[PARTIAL_KEY]


def _run_sweep(bundle, key: str, lengths: list[int], max_len: int) -> None:
    partial = {"key": key, "model": bundle.name, "device": str(bundle.device),
               "dtype": str(bundle.dtype).replace("torch.", ""), "lengths": lengths, "points": [],
               "status": "running", "started": time.perf_counter()}
    st.session_state[PARTIAL_KEY] = partial
    bar = st.progress(0.0, text="Warm-up, then the shortest lengths first…")
    live = st.empty()
    deadline = time.perf_counter() + TIME_BUDGET_S

    def on_point(point: cost.CostPoint) -> None:
        partial["points"].append({"length": point.length, "cached_ms": point.cached_ms,
                                  "naive_ms": point.naive_ms, "cached_repeats": point.cached_repeats,
                                  "naive_repeats": point.naive_repeats})

    def on_progress(fraction: float, point: cost.CostPoint | None) -> None:
        # Every Streamlit call here is also where a Stop click interrupts the run (points are saved).
        text = f"L = {point.length}: cached step {_ms(point.cached_ms)}, naive step {_ms(point.naive_ms)}"
        bar.progress(min(1.0, fraction), text=text)
        points = [cost.CostPoint(**p) for p in partial["points"]]
        live.plotly_chart(figs.step_time_figure(points, planned_max=max_len), key=f"cost_live_{len(points)}")

    try:
        result = cost.sweep(bundle, lengths, should_stop=lambda: time.perf_counter() > deadline,
                            on_point=on_point, on_progress=on_progress)
    except Exception as exc:  # noqa: BLE001 - out of memory, an odd architecture ...: a message, not a crash
        partial["status"] = "failed"
        st.session_state.pop(PARTIAL_KEY, None)
        st.session_state["cost_message"] = f"The measurement failed: {type(exc).__name__}: {exc}"
        bar.empty()
        live.empty()
        return
    st.session_state.setdefault(RESULTS_KEY, {})[key] = result.to_dict()
    st.session_state.pop(PARTIAL_KEY, None)
    if result.stopped_early:
        st.session_state["cost_message"] = f"The {TIME_BUDGET_S:.0f} s time budget ran out."
    bar.empty()
    live.empty()


def _race_section(bundle, dims: cost.ModelDims) -> cost.SweepResult | None:
    st.header("1 · The race")
    st.markdown(
        "For each sequence length **L** we time two ways of producing the token at position L: a "
        "**decode step** that feeds one token and reads the other L − 1 from the **KV cache**, and a "
        "**naive step** that pushes all L tokens through the model again (`use_cache=False`, which is "
        "a full prefill every step). Only the last position's logits are computed either way. Shortest "
        "lengths first; each point is the fastest of a few repeats (other work on the machine only ever "
        "adds time).")
    choices = [n for n in LENGTH_CHOICES if n <= bundle.max_positions] or [bundle.max_positions]
    default = cost.DEFAULT_SWEEP_LENGTH if cost.DEFAULT_SWEEP_LENGTH in choices else choices[-1]
    if st.session_state.get("cost_max_len") not in choices:
        st.session_state["cost_max_len"] = default
    max_len = st.select_slider("Longest sequence to measure", options=choices, key="cost_max_len",
                               help="Up to 1024 takes about 20–30 s on a quiet 2-core CPU.")
    lengths = cost.sample_lengths(max_len)
    st.caption(f"{len(lengths)} lengths: {', '.join(map(str, lengths))}.")
    key = _cache_key(bundle, max_len)
    results = st.session_state.setdefault(RESULTS_KEY, {})
    c1, c2, c3 = st.columns([2, 1, 1])
    label = "Run the race again" if key in results else "Run the race"
    run = c1.button(label, key="cost_run", type="primary")
    c2.button("Stop", key="cost_stop", disabled=not run,
              help="Ends the sweep after the length being measured; what was measured is kept.")
    if c3.button("Forget results", key="cost_clear", disabled=not results):
        results.clear()
    if run:
        _run_sweep(bundle, key, lengths, max_len)
    msg = st.session_state.pop("cost_message", None)
    if msg:
        st.warning(msg)
    if key not in results:
        others = [k.split("|")[-1] for k in results if k.rsplit("|", 1)[0] == key.rsplit("|", 1)[0]]
        hint = f" Results are kept for: {', '.join(sorted(others, key=int))}." if others else ""
        st.info("Press **Run the race** to measure this model on this machine." + hint)
        return None
    result = cost.SweepResult.from_dict(results[key])
    points = result.points
    if result.stopped_early:
        st.warning(f"Stopped early at length {result.last_length}: {len(points)} of {len(result.lengths)} "
                   "lengths were measured. The charts show those.")
    last = points[-1]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"Naive step at L = {last.length}", _ms(last.naive_ms))
    m2.metric(f"Cached step at L = {last.length}", _ms(last.cached_ms))
    m3.metric(f"Speedup at L = {last.length}", f"{last.speedup:,.1f}×")
    m4.metric("Sweep took", f"{result.seconds:,.1f} s")
    st.caption(f"Measured on {result.device} · {result.dtype} · {result.model}. Times are wall-clock and "
               "move with whatever else the machine is doing.")
    if result.busy:
        st.warning(f"The machine was busy during this race (load average {result.load_avg:.1f} on "
                   f"{result.cpu_count} cores): other processes took CPU time, so these times are inflated and "
                   "noisy. Run the race again when it is quieter for clean curves.")
    fitted = cost.fits(points)
    st.plotly_chart(figs.step_time_figure(points, fitted, planned_max=max(result.lengths)), key="cost_fig_step")
    left, right = st.columns(2)
    left.plotly_chart(figs.cumulative_figure(cost.cumulative_ms(points)), key="cost_fig_cum")
    right.plotly_chart(figs.speedup_figure(points), key="cost_fig_speedup")
    cum = cost.cumulative_ms(points)
    if len(cum["T"]):
        T = int(cum["T"][-1])
        st.markdown(f"Generating **{T:,} tokens** one after another: about **{cum['naive'][-1] / 1000:,.1f} s** "
                    f"naive vs **{cum['cached'][-1] / 1000:,.1f} s** with the cache (per-step times "
                    "interpolated between the measured lengths and summed).")
    table = pd.DataFrame(result.rows())
    with st.expander("Measured table"):
        st.dataframe(table, hide_index=True, key="cost_table")
    safe_model = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in result.model)
    st.download_button("Download the table (CSV)", table.to_csv(index=False).encode("utf-8"),
                       file_name=f"kv_cache_race_{safe_model}_{result.device}_{max(result.lengths)}.csv",
                       mime="text/csv", key="cost_csv")
    return result


def _count_section(dims: cost.ModelDims, result: cost.SweepResult | None, max_len: int) -> None:
    st.header("2 · Count, don't just time")
    st.markdown(
        f"Counts from this model's shape: {dims.n_layers} layers, {dims.n_heads} query heads of size "
        f"{dims.head_dim} ({dims.n_kv_heads} KV heads), hidden size d = {dims.hidden}, vocabulary "
        f"V = {dims.vocab:,}, N_body = {dims.body_params:,} weights inside the layers. One multiply-add "
        "counts as 2 FLOPs; the step that produces position L:")
    st.latex(r"F_{\text{naive}}(L) = \underbrace{2N_{\text{body}}\,L}_{\text{all }L\text{ positions}}"
             r" + \underbrace{2dV}_{\text{logits}} + \underbrace{4\,n_l n_h d_h \tfrac{L(L+1)}{2}}_{\text{causal attention}}")
    st.latex(r"F_{\text{cache}}(L) = \underbrace{2N_{\text{body}}}_{\text{one position}} + 2dV"
             r" + \underbrace{4\,n_l n_h d_h\,L}_{\text{one query, }L\text{ keys}}")
    st.markdown("Summed over the steps L = 1 … T, the positions processed are "
                r"$\sum_{L=1}^{T} L = \frac{T(T+1)}{2}$ without the cache and $T$ with it.")
    T = st.number_input("Tokens to generate, T", min_value=1, max_value=1_000_000, value=1000, step=100,
                        key="cost_T")
    T = int(T)
    rows = cost.count_table(dims, T)
    fmt = []
    for row in rows:
        is_flops = row["quantity"] == "FLOPs"
        show = (lambda v: _si(v, "FLOP")) if is_flops else (lambda v: f"{v:,}")
        fmt.append({"quantity": row["quantity"], "naive": show(row["naive"]), "KV cache": show(row["KV cache"]),
                    "naive ÷ cache": f"{row['naive / cached']:,.1f}×"})
    st.dataframe(pd.DataFrame(fmt), hide_index=True, key="cost_counts")
    attn_share = 4 * dims.n_layers * dims.n_heads * dims.head_dim * max_len / cost.flops_step(dims, max_len, True)
    st.caption(f"For {T:,} tokens: {cost.positions_total(T, False):,} positions vs {T:,}. At L = {max_len} the "
               f"attention term is {attn_share:.1%} of a cached step: for a model this small the weights "
               "dominate, so a cached step costs nearly the same at every length.")
    points = result.points if result else None
    fitted = cost.fits(points) if points else None
    scale = None
    if points:
        scale = {kind: cost.flops_per_ms(dims, points, kind == "cached") for kind in ("naive", "cached")}
    plot_max = max(result.lengths) if result else max_len
    st.plotly_chart(figs.theory_figure(dims, plot_max, points, fitted, scale), key="cost_fig_theory")
    if not points:
        st.info("Run the race above to put the measured times on the second axis.")
        return
    lines = []
    nf, cf = fitted.get("naive"), fitted.get("cached")
    if nf is not None:
        c, b, a = nf.coeffs
        lines.append(f"- naive: {a:,.2f} {_signed(b, '.4f')}·L {_signed(c, '.2e')}·L² ms (R² = {nf.r2:.3f})")
    if cf is not None:
        b, a = cf.coeffs
        lines.append(f"- cached: {a:,.2f} {_signed(b, '.5f')}·L ms (R² = {cf.r2:.3f})")
    st.markdown("Fits to the measured step times:\n" + "\n".join(lines))
    st.markdown(
        f"The right axes are scaled by one throughput each, chosen to best match the count: the naive "
        f"steps run at about **{scale['naive'] / 1e6:,.1f} GFLOP/s**, the cached steps at only "
        f"**{scale['cached'] / 1e6:,.1f} GFLOP/s**. Same model, same machine: the difference is the "
        "subject of the next section.")


@st.cache_data(show_spinner="Measuring this machine's memory bandwidth and matmul speed (about a second)…",
               max_entries=8)
def _machine_roofs(device: str, dtype: str) -> dict:
    import torch

    return {"bandwidth": cost.measure_bandwidth(device),
            "peak_flops": cost.measure_matmul_flops(device, getattr(torch, dtype)),
            "measured_at": time.strftime("%H:%M:%S")}


def _memory_section(bundle, dims: cost.ModelDims, result: cost.SweepResult | None, max_len: int) -> None:
    st.header("3 · Why a decode step is memory-bound")
    L = result.last_length if result else max_len
    b = cost.decode_bytes(dims, L)
    F = cost.flops_step(dims, L, True)
    intensity = F / b["total"]
    st.markdown(
        f"A decode step at L = {L} reads every weight once ({b['weights'] / 1e6:,.1f} MB at "
        f"{dims.bytes_per_param} bytes each) and the whole KV cache ({b['cache'] / 1e6:,.2f} MB: "
        f"2 × {dims.n_layers} layers × {dims.n_kv_heads} KV heads × {dims.head_dim} × {L} positions × "
        f"{dims.bytes_per_param} bytes) to do {_si(F, 'FLOP')} of work.")
    st.latex(r"\text{arithmetic intensity} = \frac{\text{FLOPs}}{\text{bytes read}} = "
             rf"\frac{{{F / 1e6:,.1f}\ \text{{MFLOP}}}}{{{b['total'] / 1e6:,.2f}\ \text{{MB}}}} "
             rf"\approx {intensity:.2f}\ \text{{FLOP/byte}}")
    st.plotly_chart(figs.bytes_figure(b["weights"], b["cache"], f"Bytes read by one decode step at L = {L}"),
                    key="cost_fig_bytes")
    dtype = str(bundle.dtype).replace("torch.", "")
    if st.button("Measure the machine again", key="cost_roofs_again"):
        _machine_roofs.clear()
    try:
        roofs = _machine_roofs(str(bundle.device), dtype)
    except Exception as exc:  # noqa: BLE001 - e.g. not enough free memory for the buffers
        st.warning(f"Could not measure the memory bandwidth here: {type(exc).__name__}: {exc}")
        return
    bw, peak = roofs["bandwidth"], roofs["peak_flops"]
    t_mem = b["total"] / bw * 1000.0
    t_compute = F / peak * 1000.0
    ridge = peak / bw
    c1, c2, c3 = st.columns(3)
    c1.metric("Copy bandwidth (read + write)", f"{bw / 1e9:,.1f} GB/s")
    c2.metric(f"Matmul peak ({dtype})", f"{peak / 1e9:,.1f} GFLOP/s")
    c3.metric("Ridge point", f"{ridge:,.1f} FLOP/byte")
    st.caption(f"Measured at {roofs['measured_at']} with a 128 MB copy and a 1024×1024 matmul, best of a few.")
    line = (f"**Bandwidth limit:** {b['total'] / 1e6:,.0f} MB ÷ {bw / 1e9:,.1f} GB/s ≈ **{t_mem:,.1f} ms** per "
            f"decode step at best, whereas the FLOPs alone would need only {t_compute:,.1f} ms at the matmul peak")
    if result:
        point = result.points[-1]
        ratio = point.cached_ms / t_mem
        line += (f"; the measured decode step at L = {point.length} took **{point.cached_ms:,.1f} ms** "
                 f"({ratio:,.1f}× the bandwidth limit).")
        if ratio > 4:
            line += (" That is well above both limits: other work on the machine during the race, or the fixed "
                     "cost of launching each small operation (Python, kernel dispatch), weighs more than the bytes.")
        elif point.cached_ms < t_compute * 2:
            line += " Closer to the compute limit than expected: the weights may fit in this machine's caches."
        else:
            line += " Most of a decode step is spent streaming bytes, not doing arithmetic."
    else:
        line += ". Run the race to compare with a measured decode step."
    st.markdown(line)
    st.markdown(
        f"With {intensity:.2f} FLOP/byte, far left of the ridge at {ridge:,.1f}, a decode step waits on "
        "memory: the processor could do the arithmetic many times over while the weights stream in. A naive "
        "step (and a prefill) uses every weight for L positions at once, so its intensity grows with L and it "
        "becomes compute-bound. That is also why batching many sequences makes decoding cheaper per token.")
    if result:
        point = result.points[-1]
        marks = [
            {"name": f"decode step, L={point.length}", "intensity": cost.arithmetic_intensity(dims, point.length, True),
             "achieved": cost.flops_step(dims, point.length, True) / (point.cached_ms / 1000.0)},
            {"name": f"naive step, L={point.length}", "intensity": cost.arithmetic_intensity(dims, point.length, False),
             "achieved": cost.flops_step(dims, point.length, False) / (point.naive_ms / 1000.0)},
        ]
        st.plotly_chart(figs.roofline_figure(bw, peak, marks), key="cost_fig_roofline")
        st.caption("Points are the FLOP counts divided by the measured times. The naive intensity counts the "
                   "weights read once per pass and ignores activations.")


def _device_note(bundle, result: cost.SweepResult | None) -> None:
    st.header("4 · CPU vs GPU")
    speed = f" Here the cache wins {result.points[-1].speedup:,.1f}× at L = {result.last_length}." if result else ""
    if bundle.device.type == "cuda":
        st.info("Running on CUDA: a large GPU does the L positions of a naive step in parallel, so at short "
                "lengths the naive step costs about as much as a cached one and the ratio stays near 1 until "
                "the GPU is saturated. The quadratic total still wins in the end." + speed)
    else:
        st.info("Running on the CPU: a few cores work through a naive step's L positions nearly one after "
                "another, so the naive cost shows up already at short lengths. On a large GPU the ratio is "
                "smaller at short lengths (the parallel hardware hides the extra positions) and grows once "
                "the GPU is saturated." + speed)


def main() -> None:
    st.title("Naive vs KV cache: what each token costs")
    st.markdown(
        "Without a cache, the step that writes token L recomputes every earlier position, so T tokens "
        r"cost $\frac{T(T+1)}{2}$ positions: quadratic. With the **KV cache**, each decode step processes "
        "one new position and reads the keys and values of the others: linear. Here it is measured on "
        "the loaded model, on this machine.")
    bundle = current_bundle()
    if bundle is None:
        return
    _finish_interrupted()
    try:
        dims = cost.ModelDims.from_bundle(bundle)
    except Exception as exc:  # noqa: BLE001
        st.warning(f"Cannot read this model's dimensions: {type(exc).__name__}: {exc}")
        return
    result = _race_section(bundle, dims)
    max_len = int(st.session_state.get("cost_max_len", cost.DEFAULT_SWEEP_LENGTH))
    _count_section(dims, result, max_len)
    _memory_section(bundle, dims, result, max_len)
    _device_note(bundle, result)


main()
