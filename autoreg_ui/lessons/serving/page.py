"""How servers go fast: batching, continuous batching, speculative decoding and precision, measured live."""
import time

import pandas as pd
import streamlit as st

from autoreg_core import EMBEDDED_MODEL, SamplingConfig
from autoreg_core.engine.model_spec import dtype_name
from autoreg_core.experiments import continuous_batching as scheduler
from autoreg_core.experiments import own_requests
from autoreg_core.experiments import roofline as batching
from autoreg_core.experiments import serving_measurements as measurements
from autoreg_core.experiments import speculative_decoding as speculative
from autoreg_core.runtime import batcher
from autoreg_server import settings
from autoreg_ui import controls, guide, lesson_page, measuring, measuring_text
from autoreg_ui.charts import show_chart
from autoreg_ui.format import BYTE_UNITS_NOTE
from autoreg_ui.lessons.serving import controller as serving
from autoreg_ui.lessons.serving import figures as figs
from autoreg_ui.lessons.serving import keys, live_text, questions, queue_text, speculation_text, text
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import allowed_models, current_config, current_session, shared_bundle


def render() -> None:
    """Draw the page; its entry file (``pages/serving.py``) calls this on every run."""
    bundle = lesson_page.set_up("How servers go fast", "serving", questions.QUESTIONS, text.INTRO)
    spec = bundle.spec
    controls.step_row(keys.SRV_PAGE)


    st.subheader(text.LIVE_TITLE)
    guide.show(text.GUIDES, text.LIVE_TITLE)
    st.markdown(text.LIVE_INTRO)
    if not settings.current().batch:
        st.info(text.LIVE_OFF)
    live = st.toggle(text.live_auto_label(serving.LIVE_EVERY_S), value=True, key=keys.SRV_LIVE_REFRESH,
                     help=text.LIVE_AUTO_HELP)


    @st.fragment(run_every=serving.live_every(live))
    def live_panel() -> None:
        """The batcher's last minute for this model, and how this tab's last step ran. On a timer it redraws only
        itself: a snapshot of the batcher's pass history (taken under its lock) and this tab's last record."""
        session = current_session()
        now = batcher.server_now(bundle, me=session)
        ids = list(session.ids) if session is not None else []
        if serving.offers_own_requests(now, settings.current().batch, bool(ids)):
            note, prompt, model_batcher = st.empty(), serving.own_prompt(ids), batcher.batcher_for(bundle)
            if st.button(live_text.own_button(serving.OWN_REQUESTS), key=keys.SRV_OWN_REQUESTS,
                         help=live_text.own_help(serving.OWN_REQUESTS, serving.OWN_STEPS, len(prompt), len(ids),
                                                 model_batcher.max_rows)):
                with st.spinner(live_text.OWN_RUNNING):
                    found = own_requests.send_own_requests(bundle, model_batcher, prompt, serving.OWN_REQUESTS,
                                                           serving.OWN_STEPS)
                st.session_state[keys.SRV_OWN_KEPT] = (bundle.name, found)
                now = batcher.server_now(bundle, me=session)
            sent = serving.kept_own(st.session_state, bundle.name)
            said = live_text.alone_sentence(now, time.time() - sent.started if sent else None)
            if said is None:  # another tab stepped since the offer was made
                note.empty()
            else:
                note.info(said)
        if sent := serving.kept_own(st.session_state, bundle.name):
            st.markdown(live_text.own_result(sent, time.time() - sent.started, now.window_s))
        last_rows = None
        if session is not None:
            with session.lock:
                last_rows = session.records[-1].pass_rows if session.records else None
        for col, (label, value) in zip(st.columns(4), text.live_metrics(now, last_rows)):
            col.metric(label, value)
        st.markdown(text.live_sentence(now))
        st.caption(text.live_totals(now) if live else f"{text.live_totals(now)} {text.LIVE_PAUSED}")
        if now.passes:
            show_chart(figs.pass_rows_figure(now.by_rows), key=keys.SRV_LIVE_CHART, filename="server-passes-by-rows")


    live_panel()
    st.caption(BYTE_UNITS_NOTE + text.MEASURED_LIVE)
    if measuring.running_now():
        st.info(text.measuring_now(measuring.running_now()))
    with st.spinner("Measuring this machine's memory bandwidth…"):
        roofs = measuring.roofs(str(bundle.device), dtype_name(bundle.dtype))
    bandwidth, peak = roofs.bandwidth, roofs.peak
    st.caption(measuring_text.roofs_caption(time.time() - roofs.measured_at, roofs.load, roofs.cores))


    guide.header(text.GUIDES, "1 · Batching: one weight read, many sequences")
    explain(text.BATCHING)
    largest = st.select_slider("Largest batch", options=batching.BATCH_SIZES, value=16, key=keys.SRV_BATCH_MAX)
    if measuring.run_controls(keys.SRV_BATCH, "Measure the batching curve"):
        measuring.launch(keys.SRV_BATCH.kept, "batching curve", (bundle.name, largest),
                       lambda p: measurements.batching_work(bundle, largest, p))
    if found := measuring.show_kept(keys.SRV_BATCH.kept, bundle.name):  # the measured curve right under its button
        show_chart(figs.batching_figure(found.result, spec, bandwidth, peak), key=f"{keys.SRV_CHART}_batching",
                   filename="serving-batching")
        for line in text.batching_sentences(found.result, spec, bandwidth, peak):
            st.markdown(line)
        st.dataframe(pd.DataFrame(serving.batching_rows(found.result, spec, bandwidth)), hide_index=True,
                     key=keys.SRV_BATCH.table)
    show_chart(figs.bytes_figure(spec, batching.batch_sizes(largest), measurements.context_length(bundle)),
               key=f"{keys.SRV_CHART}_bytes", filename="serving-bytes-per-step")

    guide.header(text.GUIDES, "2 · Static vs continuous batching")
    explain(text.CONTINUOUS_BATCHING)
    c1, c2, c3 = st.columns(3)
    n = c1.slider("Requests in the queue", 2, scheduler.MAX_REQUESTS, 10, key=keys.SRV_QUEUE_REQUESTS)
    slots = c2.slider("Slots in the batch", 1, 8, 4, key=keys.SRV_QUEUE_SLOTS)
    longest = c3.slider("Longest answer (tokens)", 4, scheduler.MAX_NEW, 32, key=keys.SRV_QUEUE_LONGEST)
    if measuring.run_controls(keys.SRV_QUEUE, "Serve the queue both ways"):
        measuring.launch(keys.SRV_QUEUE.kept, "static vs continuous batching", (bundle.name, n, slots, longest),
                       lambda p: measurements.serving_work(bundle, n, slots, longest, p))
    if found := measuring.show_kept(keys.SRV_QUEUE.kept, bundle.name):
        for policy, run in found.result.items():
            show_chart(figs.timeline_figure(run), key=f"{keys.SRV_CHART}_timeline_{policy}",
                       filename=f"serving-timeline-{policy}")
        st.dataframe(pd.DataFrame(serving.serving_rows(found.result)), hide_index=True, key=keys.SRV_QUEUE.table)
        for line in queue_text.serving_sentences(found.result):
            st.markdown(line)
        show_chart(figs.waits_figure(found.result), key=f"{keys.SRV_CHART}_waits", filename="serving-waits")
        with st.expander("Every request"):
            st.dataframe(pd.DataFrame(serving.request_rows(found.result, bundle.tokenizer)), hide_index=True,
                         key=keys.SRV_REQUEST_TABLE)

    guide.header(text.GUIDES, "3 · Speculative decoding")
    explain(text.SPECULATIVE)
    others = [name for name in allowed_models() if name != bundle.name]
    c1, (c2, c3, c4) = st.container(), st.columns(3)  # drafts on a row of their own: names not cut
    drafts = c1.multiselect("Drafts", [speculative.PROMPT_LOOKUP, speculative.EARLY_EXIT] + others,
                            default=[speculative.PROMPT_LOOKUP, speculative.EARLY_EXIT], key=keys.SRV_SPEC_DRAFTS,
                            help=text.OTHER_DRAFTS)
    layers = int(c2.number_input("Early exit after layer", 1, spec.n_layers - 1, measurements.default_exit_layer(spec),
                                  key=keys.SRV_SPEC_LAYERS, help=f"Of the model's {spec.n_layers} layers."))
    k = c3.slider("Draft length k", 1, speculative.MAX_DRAFT, 4, key=keys.SRV_SPEC_K)
    max_new = c4.slider("Tokens to write", 8, 96, 48, key=keys.SRV_SPEC_MAX_NEW)
    sampled = st.toggle("Sample with the sidebar's settings (off: greedy)", key=keys.SRV_SPEC_SAMPLING)
    config = current_config() if sampled else SamplingConfig(temperature=0.0)
    if measuring.run_controls(keys.SRV_SPEC, "Race the drafts against plain decoding") and drafts:
        try:
            extra = {name: shared_bundle(name) for name in drafts if name in others}
            measuring.launch(keys.SRV_SPEC.kept, "speculative decoding", (bundle.name,),
                             lambda p: measurements.speculative_work(bundle, drafts, layers, k, max_new, config, p,
                                                                     extra))
        except Exception as exc:  # noqa: BLE001 - a draft model that does not load: say so
            st.error(f"Could not load the draft model: {exc}")
    if found := measuring.show_kept(keys.SRV_SPEC.kept, bundle.name):
        st.dataframe(pd.DataFrame(serving.speculative_rows(found.result)), hide_index=True, key=keys.SRV_SPEC.table)
        for i, case in enumerate(found.result):
            for j, run in enumerate(case.runs or []):
                st.markdown(speculation_text.speculative_sentence(case, run))
                with st.expander(text.rounds_title(case.label, run.draft)):
                    show_chart(figs.rounds_figure(run), key=f"{keys.SRV_SPEC_ROUNDS}_chart_{i}_{j}",
                               filename=f"speculative-rounds-{i}-{run.draft}")
                    st.dataframe(pd.DataFrame(serving.round_rows(run, bundle.tokenizer)), hide_index=True,
                                 key=f"{keys.SRV_SPEC_ROUNDS}_{i}_{j}")
        if sampled and not config.greedy:
            st.caption(text.SAMPLED_TEXTS_DIFFER)

    guide.header(text.GUIDES, "4 · Precision: fewer bytes per weight")
    explain(text.PRECISION)
    if bundle.name == EMBEDDED_MODEL:
        st.info(text.EMBEDDED_WEIGHTS)
    if measuring.run_controls(keys.SRV_PREC, "Measure every precision"):
        measuring.launch(keys.SRV_PREC.kept, "precision table", (bundle.name,),
                         lambda p: measurements.precision_work(bundle, p))
    if found := measuring.show_kept(keys.SRV_PREC.kept, bundle.name):
        st.dataframe(pd.DataFrame(serving.precision_rows(found.result, bandwidth, bundle.tokenizer)), hide_index=True,
                     key=keys.SRV_PREC.table)
        st.markdown("\n".join(text.precision_sentences(found.result)))
        st.caption(text.precision_caption(found.result[0].cache_positions, found.result[0].quality.positions))

    st.subheader("The bit dial: where quality collapses")
    grouping = st.radio("Round in groups of", list(text.GROUPINGS), horizontal=True, key=keys.SRV_DIAL_GROUPING)
    if measuring.run_controls(keys.SRV_DIAL, text.dial_label(measurements.DIAL_BITS)):
        measuring.launch(f"{keys.SRV_DIAL.kept}_{grouping}", f"bit dial ({grouping})", (bundle.name,),
                       lambda p: measurements.dial_work(bundle, text.GROUPINGS[grouping], p))
    curves = {g: kept.result for g in text.GROUPINGS
              if (kept := measuring.show_kept(f"{keys.SRV_DIAL.kept}_{g}", bundle.name))}
    if curves:
        show_chart(figs.dial_figure(curves), key=f"{keys.SRV_CHART}_dial", filename="precision-bit-dial")
        st.markdown(text.dial_sentence(curves, text.dial_keeps(bundle.name, serving.tied_head(bundle),
                                                                 dtype_name(bundle.dtype))))
