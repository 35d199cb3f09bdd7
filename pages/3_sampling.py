"""Sampling lab: what temperature, top-k, top-p, min-p and beam search do to one set of logits.

The logits are the session's next-token logits or a typed prompt's (one prefill, cached). Sliders redo
only the sampling arithmetic; the model runs when a button asks for it (a step, continuations, beams).
"""
import time

import streamlit as st

from autoreg_core import decode
from autoreg_core.beam import beam_search
from autoreg_core.lab import compare_strategies, draw_many, inverse_cdf_draw, shown_ids, top_token_ids
from autoreg_core.tokens import sequence_text
from autoreg_ui import keys, lab, messages
from autoreg_ui import lab_text as text
from autoreg_ui.charts import show_chart
from autoreg_ui.controls import step_row
from autoreg_ui.figures.beam import beams_frame
from autoreg_ui.figures.sampling import draw_figure, draws_figure, pipeline_figure, strategies_figure, sweep_figure
from autoreg_ui.presenter import explain
from autoreg_ui.state import bundle_or_stop, kept_prompt

st.title("Sampling lab")
explain(text.INTRO)
bundle = bundle_or_stop()
state = st.session_state
lab.restore(state, lab.defaults(lab.sidebar_config(state), *kept_prompt()))
label = text.labeler(bundle.tokenizer)
step_row(keys.LAB_STEP)
source = lab.source_picker(bundle, state)
if source is None:
    st.stop()


@st.fragment
def pipeline_section() -> None:
    t_start = time.perf_counter()
    st.header("1 · The pipeline, stage by stage")
    lab.pipeline_controls(state)
    cfg, seed = lab.lab_config(state), lab.draw_seed(state)
    pipe = decode.process(source.logits, source.ids, cfg)
    draw = inverse_cdf_draw(pipe.probs, seed)
    many = draw_many(pipe.probs, int(state[keys.LAB_N]), seed)
    math_ms = (time.perf_counter() - t_start) * 1000.0
    for level, note in text.pipeline_messages(pipe):
        messages.say(note, level)
    messages.show()
    ids = shown_ids(pipe, int(state[keys.LAB_TOP_N]), also=draw.token_id)
    left, right = st.columns([5, 2])
    show_chart(pipeline_figure(pipe, ids, [label(i) for i in ids], chosen=draw.token_id),
               key=keys.LAB_PIPELINE_CHART, filename="sampling-pipeline", where=left)
    left.caption(text.shown_caption(pipe, ids, bundle.spec.vocab))
    for kind, body in text.stage_maths(pipe, label):
        (right.latex if kind == "latex" else right.markdown)(body)

    st.subheader("The draw")
    left, right = st.columns([5, 2])
    show_chart(draw_figure(draw, pipe.probs, {i: label(i) for i in draw.order[:60].tolist()}),
               key=keys.LAB_DRAW_CHART, filename=f"sampling-draw-seed{seed}", where=left)
    right.markdown(text.draw_text(draw, pipe, seed, label))
    right.markdown(text.INVERSE_CDF)
    right.caption(text.MULTINOMIAL)

    st.header("2 · Draw many")
    left, right = st.columns([1, 3])
    lab.draws_control(state, left)
    if many.capped:
        messages.say(text.capped_draws(int(state[keys.LAB_N]), many.n))
    with left:
        messages.show()
    top = top_token_ids(pipe.probs, min(int(state[keys.LAB_TOP_N]), int(pipe.kept)))
    show_chart(draws_figure(top, [label(i) for i in top], pipe.probs, many), key=keys.LAB_DRAWS_CHART,
               filename="sampling-many-draws", where=right)
    left.markdown(text.draws_text(many, pipe.probs, seed))

    st.header("3 · Temperature sweep")
    sweep = lab.sweep(source.logits)
    left, right = st.columns([5, 2])
    show_chart(sweep_figure(sweep, cfg.temperature), key=keys.LAB_SWEEP_CHART, filename="sampling-temperature-sweep",
               where=left)
    right.markdown(text.sweep_text(sweep))
    right.markdown(text.SWEEP_NOTE)
    st.caption(text.redraw_caption((time.perf_counter() - t_start) * 1000, math_ms))


@st.fragment
def strategies_section() -> None:
    st.header("4 · Strategies side by side")
    lab.strategy_controls(state)
    rows = compare_strategies(source.logits, lab.strategies(state))
    ids = top_token_ids(source.logits, 12)
    show_chart(strategies_figure(rows, ids, [label(i) for i in ids]), key=keys.LAB_STRATEGIES_CHART,
               filename="sampling-strategies")
    st.dataframe(text.strategies_table(rows), hide_index=True, key=keys.LAB_STRATEGIES_TABLE)
    st.caption(text.entropy_caption(bundle.spec.vocab))


@st.fragment
def continuations_section() -> None:
    st.header("5 · Continuations")
    explain(text.CONTINUATIONS)
    configs = lab.presets(state)
    run = lab.continuation_controls(state, list(configs))
    if lab.run_button("Generate continuations", keys.LAB_CONT_RUN, lab.fits(source, bundle, run.m),
                      text.too_long(run.m, bundle.spec.max_positions)):
        lab.store(state, keys.LAB_CONT_RESULT, source, run, lab.continuations_with_bar(bundle, source, configs, run))
    kept = lab.last_result(state, keys.LAB_CONT_RESULT, source, run, text.PRESS_CONTINUATIONS, text.OTHER_SETTINGS)
    if kept is None:
        return
    for col, tag, res in zip(st.columns(2), "AB", kept.result):
        col.subheader(f"{tag}: {res.name}")
        for box, (name, value) in zip(col.columns(4), text.continuation_metrics(res)):
            box.metric(name, value)
        col.dataframe(text.continuations_table(res), hide_index=True, key=f"{keys.LAB_CONT_TABLE}_{tag}")
        col.caption(text.run_caption(res))
    st.caption(text.CONTINUATION_METRICS)


@st.fragment
def beam_section() -> None:
    st.header("6 · Beam search")
    explain(text.BEAMS)
    st.latex(text.BEAM_SCORE_LATEX)
    explain(text.LENGTH_PENALTY)
    settings = lab.beam_controls(state)
    draw_tree = lab.beam_tree_drawer(st.empty(), bundle.tokenizer, source, label)
    if lab.run_button("Run beam search", keys.LAB_BEAM_RUN, lab.fits(source, bundle, settings.max_new_tokens),
                      text.too_long(settings.max_new_tokens)):
        with st.spinner("Beam search on the model…"):
            result = beam_search(bundle, source.prefix, settings, on_step=lambda part: draw_tree(part, live=True))
            lab.store(state, keys.LAB_BEAM_RESULT, source, settings, result)
    kept = lab.last_result(state, keys.LAB_BEAM_RESULT, source, settings, text.PRESS_BEAMS, text.OTHER_BEAM_SETTINGS)
    if kept is None:
        return
    res = kept.result
    draw_tree(res)
    st.dataframe(beams_frame(res, lambda ids: sequence_text(bundle.tokenizer, ids)), hide_index=True,
                 key=keys.LAB_BEAM_TABLE)
    st.markdown(text.beam_text(res))
    if text.greedy_beats_beams(res):
        st.info(text.GREEDY_WINS)


pipeline_section()
strategies_section()
continuations_section()
beam_section()
