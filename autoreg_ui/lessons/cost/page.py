"""Naive vs KV cache: the quadratic-vs-linear argument, counted from the model's shape and measured live."""
import time

import pandas as pd
import streamlit as st

from autoreg_core.engine.model_spec import dtype_name
from autoreg_core.experiments import kv_cost as engine
from autoreg_ui import after_run, controls, guide, lesson_page, limits, measuring, measuring_text, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.format import BYTE_UNITS_NOTE, ms
from autoreg_ui.lessons.cost import controller as cost
from autoreg_ui.lessons.cost import figures as figs
from autoreg_ui.lessons.cost import keys, questions, text
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import current_session


def render() -> None:
    """Draw the page; its entry file (``pages/cost.py``) calls this on every run."""
    bundle = lesson_page.set_up("Naive vs KV cache: what each token costs", "cost", questions.QUESTIONS, text.INTRO)
    spec, state, dtype = bundle.spec, st.session_state, dtype_name(bundle.dtype)


    @after_run.fragment
    def your_sequence() -> None:
        controls.step_row(keys.COST_PAGE)
        messages.show()
        session = current_session()
        if session is not None and session.cache is not None:
            st.caption(text.your_sequence(len(session.ids), session.cache_len, session.cache_bytes,
                                          spec.cache_bytes(session.cache_len)))


    your_sequence()
    cost.recover(state)

    guide.header(text.GUIDES, "1 · The race")
    explain(text.RACE)
    choices, default = cost.length_choices(bundle.spec.max_positions, limits.max_race_length())
    if state.get(keys.COST_MAX_LEN) not in choices:
        state[keys.COST_MAX_LEN] = default
    max_len = st.select_slider("Longest sequence to measure", options=choices, key=keys.COST_MAX_LEN,
                               help=text.MAX_LENGTH_HELP)
    st.caption(f"Lengths: {', '.join(map(str, engine.sample_lengths(max_len)))}.")
    key = cost.RaceKey.of(bundle, max_len)
    races = cost.race(state)
    kept = races.result(key)
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
    if c4.button("Forget results", key=keys.COST_CLEAR, disabled=not races.kept):
        cost.forget(state)
    if run or resume:
        bar, live = st.progress(0.0, text="Warm-up, then the shortest lengths first…"), st.empty()

        def show_progress(fraction: float, points: list[engine.CostPoint]) -> None:
            p = points[-1]
            bar.progress(min(1.0, fraction),
                         text=f"L = {p.length}: cached step {ms(p.cached_ms)}, naive {ms(p.naive_ms)}")
            show_chart(figs.step_time_figure(points, planned_max=max_len), key=f"{keys.COST_LIVE_CHART}_{len(points)}",
                       filename="race-step-times", where=live, export=False, keep=False)

        cost.run(state, bundle, key, resume=bool(resume), on_progress=show_progress)
        bar.empty()
        live.empty()
    messages.show()
    result = races.result(key)
    if result is None:
        st.info(text.press_run(cost.other_lengths(state, key)))
    else:
        points, last = result.points, result.points[-1]
        for warning in cost.warnings(result):
            st.warning(warning)
        for col, (label, value) in zip(st.columns(4), cost.headline(result)):
            col.metric(label, value)
        st.caption(text.measured_on(result.device, result.dtype, result.model))
        fitted = engine.fits(points)
        show_chart(figs.step_time_figure(points, fitted, planned_max=max(result.lengths)), key=keys.COST_FIG_STEP,
                   filename="race-step-times")
        left, right = st.columns(2)
        show_chart(figs.cumulative_figure(engine.cumulative_ms(points)), key=keys.COST_FIG_TOTAL,
                   filename="race-total-time", where=left)
        show_chart(figs.speedup_figure(points), key=keys.COST_FIG_SPEEDUP, filename="race-speedup", where=right)
        st.markdown(cost.total_time_sentence(points))
        table = pd.DataFrame(result.rows())
        with st.expander("Measured table"):
            st.dataframe(table, hide_index=True, key=keys.COST_TABLE)
        st.download_button("Download the table (CSV)", table.to_csv(index=False).encode("utf-8"),
                           file_name=cost.csv_name(result), mime="text/csv", key=keys.COST_CSV)

    guide.header(text.GUIDES, "2 · Count, don't just time")
    with guide.derivation(text.FLOPS_DERIVATION):
        st.markdown(text.counts_intro(spec))
        st.latex(text.F_NAIVE)
        st.latex(text.F_CACHE)
        st.markdown(text.SUMS)
    T = int(st.number_input("Tokens to generate, T", min_value=1, max_value=1_000_000, value=1000, step=100,
                            key=keys.COST_T))
    st.dataframe(pd.DataFrame(cost.count_rows(spec, T)), hide_index=True, key=keys.COST_COUNTS)
    st.markdown(cost.naive_counts_sentence(T))
    L_ref = result.last_length if result else max_len
    st.caption(text.attention_share(L_ref, cost.attention_share(spec, L_ref), spec.attention_equals_layers_at))
    points = result.points if result else []
    show_chart(figs.theory_figure(spec, max(result.lengths) if result else max_len, points,
                                  engine.fits(points) if points else None, cost.throughputs(spec, points)),
               key=keys.COST_FIG_THEORY, filename="cost-counted-flops")
    if points:
        st.markdown(cost.measured_vs_counted(spec, points))
    else:
        st.info("Run the race above to put the measured times on the second axis.")

    def memory_bound() -> None:
        """Section 3: the bytes a decode step reads against the FLOPs it does, on this machine's roofs."""
        st.header("3 · Is a decode step memory-bound?")
        box = st.container()  # its Notice / Try / Ask box: the Notice is read from the measurement below
        st.caption(BYTE_UNITS_NOTE)
        again = st.button("Measure the machine again", key=keys.COST_ROOFS)
        try:
            with st.spinner("Measuring this machine's memory bandwidth and matmul speed…"):
                roofs = measuring.roofs(str(bundle.device), dtype, again=again)
        except Exception as exc:  # noqa: BLE001 - e.g. not enough free memory for the buffers
            guide.show(text.GUIDES, "3 · Is a decode step memory-bound?", where=box)
            st.warning(f"Could not measure the memory bandwidth here: {type(exc).__name__}: {exc}")
            return
        budget = cost.decode_budget(spec, L_ref, roofs.bandwidth, roofs.peak)
        guide.show(text.GUIDES, "3 · Is a decode step memory-bound?", notice=text.memory_notice(budget), where=box)
        with guide.derivation(text.INTENSITY_DERIVATION):
            st.markdown(text.decode_reads(spec, budget, L_ref))
            st.latex(text.intensity_latex(budget))
        show_chart(figs.bytes_figure(budget.weight_bytes, budget.cache_bytes,
                                     f"Bytes read by one decode step at L = {L_ref}"), key=keys.COST_FIG_BYTES,
                   filename=f"decode-step-bytes-L{L_ref}")
        for col, (label, value) in zip(st.columns(3), cost.roof_metrics(budget, dtype)):
            col.metric(label, value)
        st.caption(measuring_text.roofs_caption(time.time() - roofs.measured_at, roofs.load, roofs.cores)
                   + " A 128 MiB copy and a 1024×1024 matmul, best of a few.")
        st.markdown(cost.verdict(budget, last.cached_ms if result else None))
        st.markdown(text.memory_bound(budget, spec.arithmetic_intensity(L_ref, cached=False)))
        if result:
            show_chart(figs.roofline_figure(budget.bandwidth, budget.peak_flops, cost.roofline_marks(spec, last)),
                       key=keys.COST_FIG_ROOFLINE, filename="roofline")
            with guide.derivation(text.ROOFLINE_DERIVATION):
                st.markdown(text.ROOFLINE_POINTS)


    memory_bound()

    guide.header(text.GUIDES, "4 · CPU vs GPU")
    st.info(text.cpu_vs_gpu(bundle.device.type == "cuda", last if result else None))
