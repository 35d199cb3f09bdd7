"""Sampling lab: what temperature, top-k, top-p, min-p and beam search do to one set of logits.

Sliders redo only the sampling arithmetic; the model runs when a button asks (a step, continuations, beams).
"""
import time

import streamlit as st

from autoreg_core.engine import decode
from autoreg_core.experiments.beam_search import beam_search
from autoreg_core.experiments.sampling_lab import (
    compare_strategies,
    draw_many,
    inverse_cdf_draw,
    shown_ids,
    top_token_ids,
)
from autoreg_ui import guide, lesson_page, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.controls import open_section, step_row
from autoreg_ui.lessons.sampling import controller as sampling
from autoreg_ui.lessons.sampling import keys, questions, text, view
from autoreg_ui.lessons.sampling.figures import (
    draw_figure,
    draws_figure,
    pipeline_figure,
    strategies_figure,
    sweep_figure,
)
from autoreg_ui.lessons.sampling.figures.pipeline import HEIGHT as PIPELINE_HEIGHT
from autoreg_ui.lessons.sampling.figures.pipeline import PRESENTER_HEIGHT as PIPELINE_PRESENTER_HEIGHT
from autoreg_ui.lessons.sampling.figures.pipeline import PRESENTER_TOKENS as PIPELINE_PRESENTER_TOKENS
from autoreg_ui.sharing import presenter
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import keep_widget_values, kept_prompt, restore_widgets


def render() -> None:
    """Draw the page; its entry file (``pages/sampling.py``) calls this on every run."""
    bundle = lesson_page.set_up("Sampling lab", "sampling", questions.QUESTIONS, text.INTRO)
    state = st.session_state
    restore_widgets(state, sampling.defaults(sampling.sidebar_config(state), *kept_prompt()))
    label = text.labeler(bundle.tokenizer)
    step_row(keys.LAB_STEP)
    # On a projector one step fits one screen: the sentence, the four settings and the chart come first; where the
    # logits come from is drawn under section 1 (its container is made first, so it shows first).
    presenting = presenter.active()
    first_section = st.container()  # section 1's box first: its chart above the picker of where the logits come from
    source = view.source_picker(bundle, state, context=not presenting)
    if source is None:
        st.stop()


    # Six panels of 15 token names need about 760 px to be read: on a narrower screen (a phone) the chart keeps that
    # width and scrolls sideways instead of squeezing its titles and numbers over each other.
    PIPELINE_CSS = (f"<style>.st-key-{keys.LAB_PIPELINE_CHART} {{ overflow-x: auto; }} "
                    f".st-key-{keys.LAB_PIPELINE_CHART} > div {{ min-width: 760px; }}</style>")


    def the_pipeline(pipe: decode.Pipeline, seed: int, t_start: float) -> None:
        draw = inverse_cdf_draw(pipe.probs, seed)
        math_ms = (time.perf_counter() - t_start) * 1000.0
        top_n = min(int(state[keys.LAB_TOP_N]), PIPELINE_PRESENTER_TOKENS) if presenting else int(state[keys.LAB_TOP_N])
        ids = shown_ids(pipe, top_n, also=draw.token_id)
        left, right = st.container(), st.expander(text.FORMULAS, expanded=not presenting)  # the chart takes the width
        left.html(PIPELINE_CSS)
        show_chart(pipeline_figure(pipe, ids, [label(i) for i in ids], chosen=draw.token_id,
                                   height=PIPELINE_PRESENTER_HEIGHT if presenting else PIPELINE_HEIGHT),
                   key=keys.LAB_PIPELINE_CHART, filename="sampling-pipeline", where=left)
        left.caption(text.shown_caption(pipe, ids, bundle.spec.vocab))
        for kind, body in text.stage_maths(pipe, label):
            (right.latex if kind == "latex" else right.markdown)(body)
        st.caption(text.redraw_caption((time.perf_counter() - t_start) * 1000, math_ms))


    def the_draw(pipe: decode.Pipeline, seed: int, t_start: float) -> None:
        draw = inverse_cdf_draw(pipe.probs, seed)
        left, right = st.columns([5, 2])
        show_chart(draw_figure(draw, pipe.probs, {i: label(i) for i in draw.order[:60].tolist()}),
                   key=keys.LAB_DRAW_CHART, filename=f"sampling-draw-seed{seed}", where=left)
        right.markdown(text.draw_text(draw, pipe, seed, label))
        right.markdown(text.INVERSE_CDF)
        right.caption(text.MULTINOMIAL)


    def many_draws(pipe: decode.Pipeline, seed: int, t_start: float) -> None:
        left, right = st.columns([1, 3])
        view.draws_control(state, left)
        many = draw_many(pipe.probs, int(state[keys.LAB_N]), seed)
        if many.capped:
            messages.say(text.capped_draws(int(state[keys.LAB_N]), many.n))
        with left:
            messages.show()
        top = top_token_ids(pipe.probs, min(int(state[keys.LAB_TOP_N]), int(pipe.kept)))
        show_chart(draws_figure(top, [label(i) for i in top], pipe.probs, many), key=keys.LAB_DRAWS_CHART,
                   filename="sampling-many-draws", where=right)
        left.markdown(text.draws_text(many, pipe.probs, seed))


    def temperature_sweep(pipe: decode.Pipeline, seed: int, t_start: float) -> None:
        sweep = sampling.sweep(source.logits)
        left, right = st.columns([5, 2])
        show_chart(sweep_figure(sweep, sampling.lab_config(state).temperature), key=keys.LAB_SWEEP_CHART,
                   filename="sampling-temperature-sweep", where=left)
        right.markdown(text.sweep_text(sweep))
        right.markdown(text.SWEEP_NOTE)


    VIEWS = {"The pipeline, stage by stage": the_pipeline, "The draw": the_draw, "Draw many": many_draws,
             "Temperature sweep": temperature_sweep}  # one at a time: a slider move redraws the open one only


    @st.fragment
    def sampling_section() -> None:
        t_start = time.perf_counter()
        keep_widget_values(state, (keys.LAB_N,))  # drawn in one view only: kept while another is open
        if presenting:  # the chart beside the sentence and the four settings; the rest folded under it
            views, side = st.columns([4, 1])
            with side:
                st.caption(text.CONTINUING)
                view.show_context(bundle, source)
                view.stacked_controls(state)
        else:
            st.header("1 · Sampling one set of logits")  # each of its tabs has its own box
            view.pipeline_controls(state)
            views = st.container()
        pipe = decode.process(source.logits, source.ids, sampling.lab_config(state))
        with views:
            for level, note in text.pipeline_messages(pipe):
                messages.say(note, level)
            messages.show()
            open_section(VIEWS, keys.LAB_VIEW, pipe, sampling.draw_seed(state), t_start, guides=text.GUIDES)
        if not presenting:  # the picture first, the view's own settings under it
            view.pipeline_view_controls(state)
        if presenting:
            with st.expander(text.MORE_SETTINGS):
                st.caption(text.LAB_SLIDERS + " " + text.presenter_tokens(PIPELINE_PRESENTER_TOKENS))
                view.view_controls(state, st.columns(4))


    @st.fragment
    def strategies_section() -> None:
        guide.header(text.GUIDES, "2 · Strategies side by side")
        view.strategy_controls(state)
        rows = compare_strategies(source.logits, sampling.strategies(state))
        ids = top_token_ids(source.logits, 12)
        show_chart(strategies_figure(rows, ids, [label(i) for i in ids]), key=keys.LAB_STRATEGIES_CHART,
                   filename="sampling-strategies")
        st.dataframe(text.strategies_table(rows), hide_index=True, key=keys.LAB_STRATEGIES_TABLE)
        st.caption(text.entropy_caption(bundle.spec.vocab))


    @st.fragment
    def continuations_section() -> None:
        guide.header(text.GUIDES, "3 · Continuations")
        explain(text.CONTINUATIONS)
        configs = sampling.presets(state)
        run = view.continuation_controls(state, list(configs))
        if view.run_button("Generate continuations", keys.LAB_CONT_RUN, sampling.fits(source, bundle, run.m),
                           text.too_long(run.m, bundle.spec.max_positions)):
            sampling.store(state, keys.LAB_CONT_RESULT, source, run,
                           view.continuations_with_bar(bundle, source, configs, run))
        kept = view.last_result(state, keys.LAB_CONT_RESULT, source, run, text.PRESS_CONTINUATIONS,
                                text.OTHER_SETTINGS)
        if kept is None:
            return
        view.show_continuations(kept.result)
        st.caption(text.CONTINUATION_METRICS)


    @st.fragment
    def beam_section() -> None:
        guide.header(text.GUIDES, "4 · Beam search")
        explain(text.BEAMS)
        explain(text.BEAM_USES)
        st.latex(text.BEAM_SCORE_LATEX)
        explain(text.LENGTH_PENALTY)
        settings = view.beam_controls(state)
        run = view.run_button("Run beam search", keys.LAB_BEAM_RUN,
                              sampling.fits(source, bundle, settings.max_new_tokens),
                              text.too_long(settings.max_new_tokens))
        # under the button: its progress, then the tree growing as the search runs (a tree drawn above the button
        # pushed the button and its progress down the page while the learner watched)
        progress = st.container()
        draw_tree = view.beam_tree_drawer(st.empty(), bundle.tokenizer, source, label)
        if run:
            with progress, st.spinner("Beam search on the model…"):
                result = beam_search(bundle, source.prefix, settings, on_step=lambda part: draw_tree(part, live=True))
                sampling.store(state, keys.LAB_BEAM_RESULT, source, settings, result)
        kept = view.last_result(state, keys.LAB_BEAM_RESULT, source, settings, text.PRESS_BEAMS,
                                text.OTHER_BEAM_SETTINGS)
        if kept is None:
            return
        draw_tree(kept.result)
        view.show_beams(kept.result, bundle.tokenizer)


    with first_section:
        sampling_section()
    strategies_section()
    continuations_section()
    beam_section()
