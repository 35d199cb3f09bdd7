"""Naive vs KV cache: the quadratic-vs-linear argument, counted from the model's shape and measured live."""
import pandas as pd
import streamlit as st

from autoreg_core import cost
from autoreg_core.spec import dtype_name
from autoreg_ui import controls, keys, limits, messages, race
from autoreg_ui.figures import cost as figs
from autoreg_ui.charts import show_chart
from autoreg_ui.format import BYTE_UNITS_NOTE, human_bytes, ms, ratio
from autoreg_ui.presenter import explain
from autoreg_ui.state import current_bundle, current_session

st.title("Naive vs KV cache: what each token costs")
explain(
    "Without a cache, the step that writes token L recomputes every earlier position, so T tokens cost "
    r"$\frac{T(T+1)}{2}$ positions through the weights: quadratic. With the **KV cache** each decode step "
    "feeds one new position and reads the keys and values of the others from the cache: linear in the weights' "
    "work, while attention over the cache still grows with L. Here it is counted and measured on the loaded "
    "model, on this machine.")
bundle = current_bundle()
if bundle is None:
    st.stop()
spec, state, dtype = bundle.spec, st.session_state, dtype_name(bundle.dtype)


@st.fragment
def your_sequence() -> None:
    controls.step_row(keys.COST_PAGE)
    messages.show()
    session = current_session()
    if session is not None and session.cache is not None:
        st.caption(f"Your sequence: {len(session.ids)} tokens; its KV cache holds {session.cache_len} positions, "
                   f"{human_bytes(session.cache_bytes)} measured ({human_bytes(spec.cache_bytes(session.cache_len))} "
                   "by the formula). Every step adds one position and one decode step of the race below.")


your_sequence()
race.recover(state)

st.header("1 · The race")
explain(
    "For each sequence length **L** we time two ways of producing the token at position L: a **decode step** "
    "that feeds one token and reads the other L − 1 from the **KV cache**, and a **naive step** that pushes all "
    "L tokens through the model again (no cache: a full prefill every step). Only the last position's logits "
    "are computed either way. Shortest lengths first; each point is the fastest of a few repeats (other work on "
    "the machine only ever adds time).")
choices, default = race.length_choices(bundle.spec.max_positions, limits.max_race_length())
if state.get(keys.COST_MAX_LEN) not in choices:
    state[keys.COST_MAX_LEN] = default
max_len = st.select_slider("Longest sequence to measure", options=choices, key=keys.COST_MAX_LEN,
                           help="Up to 1024 takes about 20–30 s on a quiet 2-core CPU.")
st.caption(f"Lengths: {', '.join(map(str, cost.sample_lengths(max_len)))}.")
key = race.RaceKey.of(bundle, max_len)
results = race.race(state).results
kept = results.get(key)
c1, c2, c3, c4 = st.columns([2, 1, 1.4, 1])
resumable = bool(kept and kept.remaining)  # then key A continues the race, else it runs it
run = c1.button("Run the race again" if kept else "Run the race", key=keys.COST_RUN, type="primary",
                shortcut=None if resumable else controls.ADVANCE_SHORTCUT)
resume = c3.button(f"Continue from L = {kept.remaining[0]}" if resumable else "Continue",
                   key=keys.COST_RESUME, disabled=not resumable,
                   shortcut=controls.ADVANCE_SHORTCUT if resumable else None,
                   help="Measure the lengths a stopped race did not reach.")
c2.button("Stop", key=keys.COST_STOP, disabled=not (run or resume),
          help="Ends the race after the length being measured; what was measured is kept.")
if c4.button("Forget results", key=keys.COST_CLEAR, disabled=not results):
    race.forget(state)
if run or resume:
    bar, live = st.progress(0.0, text="Warm-up, then the shortest lengths first…"), st.empty()

    def show_progress(fraction: float, points: list[cost.CostPoint]) -> None:
        p = points[-1]
        bar.progress(min(1.0, fraction), text=f"L = {p.length}: cached step {ms(p.cached_ms)}, naive {ms(p.naive_ms)}")
        show_chart(figs.step_time_figure(points, planned_max=max_len), key=f"{keys.COST_LIVE_CHART}_{len(points)}",
                   filename="race-step-times", where=live, export=False, keep=False)

    race.run(state, bundle, key, resume=bool(resume), on_progress=show_progress)
    bar.empty()
    live.empty()
messages.show()
result = results.get(key)
if result is None:
    others = race.other_lengths(state, key)
    st.info("Press **Run the race** to measure this model on this machine."
            + (f" Results are kept for: {', '.join(map(str, others))}." if others else ""))
else:
    points, last = result.points, result.points[-1]
    for text in race.warnings(result):
        st.warning(text)
    for col, (label, value) in zip(st.columns(4), race.headline(result)):
        col.metric(label, value)
    st.caption(f"Measured on {result.device} · {result.dtype} · {result.model}. Times are wall-clock and move "
               "with whatever else the machine is doing.")
    fitted = cost.fits(points)
    show_chart(figs.step_time_figure(points, fitted, planned_max=max(result.lengths)), key=keys.COST_FIG_STEP,
               filename="race-step-times")
    left, right = st.columns(2)
    show_chart(figs.cumulative_figure(cost.cumulative_ms(points)), key=keys.COST_FIG_TOTAL,
               filename="race-total-time", where=left)
    show_chart(figs.speedup_figure(points), key=keys.COST_FIG_SPEEDUP, filename="race-speedup", where=right)
    st.markdown(race.total_time_sentence(points))
    table = pd.DataFrame(result.rows())
    with st.expander("Measured table"):
        st.dataframe(table, hide_index=True, key=keys.COST_TABLE)
    st.download_button("Download the table (CSV)", table.to_csv(index=False).encode("utf-8"),
                       file_name=race.csv_name(result), mime="text/csv", key=keys.COST_CSV)

st.header("2 · Count, don't just time")
st.markdown(
    f"Counts from this model's shape: {spec.n_layers} layers, {spec.n_heads} query heads of size {spec.head_dim} "
    f"({spec.n_kv_heads} KV heads), hidden size d = {spec.hidden}, vocabulary V = {spec.vocab:,}, "
    f"N_body = {spec.body_params:,} weights inside the layers. One multiply-add counts as 2 FLOPs; the step that "
    "produces position L:")
st.latex(r"F_{\text{naive}}(L) = \underbrace{2N_{\text{body}}\,L}_{\text{all }L\text{ positions}}"
         r" + \underbrace{2dV}_{\text{logits}}"
         r" + \underbrace{4\,n_l n_h d_h \tfrac{L(L+1)}{2}}_{\text{causal attention}}")
st.latex(r"F_{\text{cache}}(L) = \underbrace{2N_{\text{body}}}_{\text{one position}} + 2dV"
         r" + \underbrace{4\,n_l n_h d_h\,L}_{\text{one query, }L\text{ keys}}")
st.markdown(
    r"Summed over the steps L = 1 … T, the positions processed are $\sum_{L=1}^{T} L = \frac{T(T+1)}{2}$ without "
    "the cache and $T$ with it. **The cache removes the recomputed projections and MLPs of earlier positions, "
    r"not the attention over them:** the cached run still does $\frac{T(T+1)}{2}$ dot products per layer and head "
    r"in total (the naive run does $\frac{T(T+1)(T+2)}{6}$), as the table shows.")
T = int(st.number_input("Tokens to generate, T", min_value=1, max_value=1_000_000, value=1000, step=100,
                        key=keys.COST_T))
st.dataframe(pd.DataFrame(race.count_rows(spec, T)), hide_index=True, key=keys.COST_COUNTS)
st.markdown(race.naive_counts_sentence(T))
L_ref = result.last_length if result else max_len
st.caption(f"At L = {L_ref} the attention term is {race.attention_share(spec, L_ref):.1%} of a cached step: for a "
           "model this small the weights dominate, so a cached step costs nearly the same at every length.")
points = result.points if result else []
show_chart(figs.theory_figure(spec, max(result.lengths) if result else max_len, points,
                              cost.fits(points) if points else None, race.throughputs(spec, points)),
           key=keys.COST_FIG_THEORY, filename="cost-counted-flops")
if points:
    st.markdown(race.measured_vs_counted(spec, points))
else:
    st.info("Run the race above to put the measured times on the second axis.")


machine_roofs = st.cache_data(race.measure_roofs, max_entries=8,
                              show_spinner="Measuring this machine's memory bandwidth and matmul speed…")


def memory_bound() -> None:
    """Section 3: the bytes a decode step reads against the FLOPs it does, on this machine's roofs."""
    st.header("3 · Why a decode step is memory-bound")
    st.caption(BYTE_UNITS_NOTE)
    if st.button("Measure the machine again", key=keys.COST_ROOFS):
        machine_roofs.clear()
    try:
        roofs = machine_roofs(str(bundle.device), dtype)
    except Exception as exc:  # noqa: BLE001 - e.g. not enough free memory for the buffers
        st.warning(f"Could not measure the memory bandwidth here: {type(exc).__name__}: {exc}")
        return
    budget = race.decode_budget(spec, L_ref, roofs["bandwidth"], roofs["peak"])
    st.markdown(
        f"A decode step at L = {L_ref} reads every weight once ({human_bytes(budget.weight_bytes)} at "
        f"{spec.weight_bytes_per_param:g} bytes each) and the whole KV cache ({human_bytes(budget.cache_bytes)}: "
        f"2 × {spec.n_layers} layers × {spec.n_kv_heads} KV heads × {spec.head_dim} × {L_ref} positions × "
        f"{spec.cache_bytes_per_element:g} bytes) to do {budget.flops / 1e6:,.1f} MFLOP of work.")
    st.latex(r"\text{arithmetic intensity} = \frac{\text{FLOPs}}{\text{bytes read}} = "
             rf"\frac{{{budget.flops / 1e6:,.1f}\ \text{{MFLOP}}}}{{\text{{{human_bytes(budget.bytes_read)}}}}} "
             rf"\approx {budget.intensity:.2f}\ \text{{FLOP/byte}}")
    show_chart(figs.bytes_figure(budget.weight_bytes, budget.cache_bytes,
                                 f"Bytes read by one decode step at L = {L_ref}"), key=keys.COST_FIG_BYTES,
               filename=f"decode-step-bytes-L{L_ref}")
    for col, (label, value) in zip(st.columns(3), race.roof_metrics(budget, dtype)):
        col.metric(label, value)
    st.caption(f"Measured at {roofs['measured_at']} with a 128 MiB copy and a 1024×1024 matmul, best of a few.")
    st.markdown(race.verdict(budget, last.cached_ms if result else None))
    st.markdown(
        f"With {budget.intensity:.2f} FLOP/byte, far left of the ridge at {budget.ridge:,.1f}, a decode step waits on "
        "memory: the processor could do the arithmetic many times over while the weights stream in. A naive step "
        "(and a prefill) uses every weight for L positions at once, so its intensity grows with L and it becomes "
        "compute-bound. That is also why batching many sequences makes decoding cheaper per token.")
    if result:
        show_chart(figs.roofline_figure(budget.bandwidth, budget.peak_flops, race.roofline_marks(spec, last)),
                   key=keys.COST_FIG_ROOFLINE, filename="roofline")
        st.caption("Points are the FLOP counts divided by the measured times. The naive intensity counts the weights "
                   "read once per pass and ignores activations.")


memory_bound()

st.header("4 · CPU vs GPU")
speed = f" Here the cache wins {ratio(last.speedup)} at L = {last.length}." if result else ""
st.info(("Running on CUDA: a large GPU does the L positions of a naive step in parallel, so at short lengths the "
         "naive step costs about as much as a cached one and the ratio stays near 1 until the GPU is saturated. "
         "The quadratic total still wins in the end." if bundle.device.type == "cuda" else
         "Running on the CPU: a few cores work through a naive step's L positions nearly one after another, so "
         "the naive cost shows up already at short lengths. On a large GPU the ratio is smaller at short lengths "
         "(the parallel hardware hides the extra positions) and grows once the GPU is saturated.") + speed)
