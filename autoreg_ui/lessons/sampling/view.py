"""The sampling lab's widgets and result views: what the page draws from the controller's state.

The controller says where the logits come from, reads the settings and keeps results; everything here puts
something on the screen (a widget, a caption, a table, a chart), so the page reads as a list of its sections.
"""
from __future__ import annotations

from collections.abc import Callable, MutableMapping

import streamlit as st

from autoreg_core import SamplingConfig, SessionError
from autoreg_core.engine.tokens import sequence_text
from autoreg_core.experiments.beam_search import BeamResult, BeamSettings
from autoreg_core.experiments.continuations import MAX_CONTINUATIONS, ContinuationSet
from autoreg_core.experiments.sampling_lab import MAX_DRAWS
from autoreg_ui import controls, family_text, measuring, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.lessons.sampling import controller as sampling
from autoreg_ui.lessons.sampling import keys, text
from autoreg_ui.lessons.sampling.controller import ContinuationRun, LabSource
from autoreg_ui.lessons.sampling.figures import beam_tree_figure, beams_frame
from autoreg_ui.lessons.sampling.text import beam_labels, context_text, continuation_progress
from autoreg_ui.state import current_session


# ---------------------------------------------------------------- the lab's widgets
def source_picker(bundle, state: MutableMapping, context: bool = True) -> LabSource | None:
    """Where the logits come from: the radio, the prompt box when typing, the context (``context``: shown here,
    else the page shows it with ``show_context``); None after a message."""
    options = sampling.source_options(current_session() is not None)
    sampling.choose_valid(state, keys.LAB_SOURCE, options)
    st.radio("Logits from", options, key=keys.LAB_SOURCE, horizontal=True,
             help="The session is the Step page's (the step buttons above advance it); its next-token logits "
                  "are what the model would pick from now.")
    try:
        if state[keys.LAB_SOURCE] == sampling.PROMPT_SOURCE:
            left, right = st.columns([4, 1])
            left.text_input("Prompt", key=keys.LAB_PROMPT)
            chat_ok = bundle.has_chat_template
            if not chat_ok:
                state[keys.LAB_CHAT] = False
            right.toggle("Chat mode", key=keys.LAB_CHAT, disabled=not chat_ok,
                         help=None if chat_ok else family_text.chat_off(bundle.name))
            source = sampling.prompt_source(bundle, state[keys.LAB_PROMPT], state[keys.LAB_CHAT])
        else:
            source = sampling.session_source(current_session())
    except SessionError as exc:
        messages.say(str(exc))
        source = None
    sampling.remember(state)
    messages.show()
    if source is not None and context:
        with st.expander(text.context_title(len(source.ids)), expanded=True):  # the sentence stays in view
            show_context(bundle, source)
    if source is not None and source.stop_message:
        st.info(text.stopped(source.stop_message))
    return source


def show_context(bundle, source: LabSource, where=st) -> None:
    """The sentence being continued, whole (wrapped)."""
    where.code(context_text(bundle.tokenizer, source.ids), language=None, wrap_lines=True)


def pipeline_controls(state: MutableMapping) -> None:
    """The four sampling settings in a row (the view's own come under its chart: ``pipeline_view_controls``)."""
    cols = st.columns(4)
    cols[0].slider(text.LAB_TEMPERATURE, 0.0, 3.0, step=0.05, key=keys.LAB_TEMPERATURE, help=text.LAB_SLIDERS_HELP)
    cols[1].number_input("Top-k (0 = off)", min_value=0, max_value=10_000_000, step=1, key=keys.LAB_TOP_K)
    cols[2].slider("Top-p (1 = off)", 0.0, 1.0, step=0.01, key=keys.LAB_TOP_P)
    cols[3].slider("Min-p (0 = off)", 0.0, 1.0, step=0.01, key=keys.LAB_MIN_P)
    sampling.remember(state)


def pipeline_view_controls(state: MutableMapping) -> None:
    """Under the chart: what the four settings mean, then the view's own (tokens shown, seed, draw again, copy)."""
    st.caption(text.LAB_SLIDERS)
    view_controls(state, st.columns(4))


def stacked_controls(state: MutableMapping) -> None:
    """On a projector: the four settings one under another, beside the chart (the rest: ``view_controls``)."""
    st.slider(text.LAB_TEMPERATURE, 0.0, 3.0, step=0.05, key=keys.LAB_TEMPERATURE, help=text.LAB_SLIDERS_HELP)
    st.slider("Top-p (1 = off)", 0.0, 1.0, step=0.01, key=keys.LAB_TOP_P)
    st.number_input("Top-k (0 = off)", min_value=0, max_value=10_000_000, step=1, key=keys.LAB_TOP_K)
    st.slider("Min-p (0 = off)", 0.0, 1.0, step=0.01, key=keys.LAB_MIN_P)
    sampling.remember(state)


def view_controls(state: MutableMapping, cols) -> None:
    """Tokens shown, the draw's seed, Draw again and Copy the sidebar's settings, in four ``cols``."""
    cols[0].slider("Tokens shown", 5, 40, step=1, key=keys.LAB_TOP_N)
    cols[1].number_input("Seed of the draw", min_value=0, max_value=2**31 - 1, step=1, key=keys.LAB_SEED)
    cols[2].button("Draw again", key=keys.LAB_REDRAW, on_click=sampling.redraw, args=(state,),
                   shortcut=controls.ADVANCE_SHORTCUT, help="The next draw, with the next seed.")
    cols[3].button("Copy the sidebar's settings", key=keys.LAB_FROM_SIDEBAR, on_click=sampling.copy_sidebar,
                   args=(state,))
    sampling.remember(state)


def draws_control(state: MutableMapping, where) -> None:
    where.number_input(f"N draws (at most {MAX_DRAWS:,})", min_value=1, max_value=1_000_000, step=100,
                       key=keys.LAB_N)
    sampling.remember(state)


def strategy_controls(state: MutableMapping) -> None:
    cols = st.columns(3)
    cols[0].number_input("k of the top-k strategy", min_value=0, max_value=10_000_000, step=1,
                         key=keys.LAB_STRAT_TOP_K)
    cols[1].slider("p of the top-p strategy", 0.0, 1.0, step=0.01, key=keys.LAB_STRAT_TOP_P)
    cols[2].slider("min-p of the min-p strategy", 0.0, 1.0, step=0.01, key=keys.LAB_STRAT_MIN_P)
    sampling.remember(state)


def continuation_controls(state: MutableMapping, names: list[str]) -> ContinuationRun:
    for key in (keys.LAB_CONT_A, keys.LAB_CONT_B):
        sampling.choose_valid(state, key, names)
    cols = st.columns(4)
    cols[0].selectbox("Strategy A", names, key=keys.LAB_CONT_A)
    cols[1].selectbox("Strategy B", names, key=keys.LAB_CONT_B)
    cols[2].slider("K continuations", 1, MAX_CONTINUATIONS, step=1, key=keys.LAB_CONT_K)
    cols[3].slider("M tokens each", 1, sampling.CONTINUATION_TOKENS, step=1, key=keys.LAB_CONT_M)
    sampling.remember(state)
    return sampling.continuation_run(state)


def beam_controls(state: MutableMapping) -> BeamSettings:
    cols = st.columns(3)
    cols[0].slider("Beam width", *sampling.BEAM_WIDTHS, step=1, key=keys.LAB_BEAM_WIDTH)
    cols[1].slider("Steps", *sampling.BEAM_STEPS, step=1, key=keys.LAB_BEAM_STEPS)
    cols[2].slider("Length penalty α", 0.0, 2.0, step=0.1, key=keys.LAB_BEAM_LP)
    sampling.remember(state)
    return sampling.beam_settings(state)


# ---------------------------------------------------------------- the sections' runs and results
def last_result(state: MutableMapping, key: str, source: LabSource, settings, press: str,
                differs: str) -> measuring.Kept | None:
    """The section's kept result for these logits, under a caption when there is none (``press``: what the
    button does) or when it was made with other settings than the ones now shown (``differs``)."""
    kept = sampling.kept_result(state, key, source)
    if kept is None:
        st.caption(press)
    elif kept.chosen != settings:
        st.caption(differs)
    return kept


def show_continuations(pair: list[ContinuationSet]) -> None:
    """Strategies A and B side by side: their metrics, their continuations, how long each run took."""
    for col, tag, res in zip(st.columns(2), "AB", pair):
        col.subheader(f"{tag}: {res.name}")
        for box, (name, value) in zip(col.columns(4), text.continuation_metrics(res)):
            box.metric(name, value)
        col.dataframe(text.continuations_table(res), hide_index=True, key=f"{keys.LAB_CONT_TABLE}_{tag}")
        col.caption(text.run_caption(res))


def show_beams(result: BeamResult, tokenizer) -> None:
    """Every finished beam as a table row, what ranked them, and when greedy did better."""
    st.dataframe(beams_frame(result, lambda ids: sequence_text(tokenizer, ids)), hide_index=True,
                 key=keys.LAB_BEAM_TABLE)
    st.markdown(text.beam_text(result))
    if text.greedy_beats_beams(result):
        st.info(text.GREEDY_WINS)


def continuations_with_bar(bundle, source: LabSource, configs: dict[str, SamplingConfig],
                           run: ContinuationRun) -> list[ContinuationSet]:
    """``run_continuations`` (the controller's) under a progress bar (strategy and token), removed when done."""
    bar = st.progress(0.0, text="Generating…")
    results = sampling.run_continuations(bundle, source, configs, run,
                                on_step=lambda *at: bar.progress(*continuation_progress(*at)))
    bar.empty()
    return results


def run_button(label: str, key: str, room: bool, too_long: str) -> bool:
    """A section's run button; without ``room`` for its tokens after the context, the message why not instead."""
    if room:
        return st.button(label, key=key, type="primary")
    messages.say(too_long)
    messages.show()
    return False


def beam_tree_drawer(where, tokenizer, source: LabSource, label: Callable[[int], str]) -> Callable[..., None]:
    """``draw(result, live=False)``: the beam tree in ``where`` (an ``st.empty()``), under "…" and the context's
    last three tokens; ``live``: redrawn after each step while the search runs (neither exported nor kept)."""
    context_label = "…" + context_text(tokenizer, source.ids, last=3)

    def draw(result: BeamResult, live: bool = False) -> None:
        show_chart(beam_tree_figure(result, beam_labels(result, label), context_label), filename="beam-tree",
                   key=f"{keys.LAB_BEAM_LIVE}_{result.steps}" if live else keys.LAB_BEAM_CHART, where=where,
                   export=not live, keep=not live)
    return draw
