"""Inside generation: training vs generation, the logit lens, prefill vs decode in seconds, a full cache.

The page draws; what it measures, keeps and computes is the controller's (``controller``).
"""
from __future__ import annotations

from collections.abc import Callable, MutableMapping

import streamlit as st

from autoreg_core import SamplingConfig
from autoreg_core.engine.tokens import single_token_view
from autoreg_core.experiments import logit_lens as lens
from autoreg_core.experiments import prefill_decode as phases
from autoreg_core.experiments import sliding_window as window
from autoreg_core.experiments import toy_model as toy
from autoreg_core.experiments.unembedding import unembed
from autoreg_ui import controls, guide, lesson_page, measuring, messages
from autoreg_ui import keys as site_keys
from autoreg_ui.charts import show_chart
from autoreg_ui.family_text import family_name
from autoreg_ui.format import BYTE_UNITS_NOTE
from autoreg_ui.lessons.inside import controller as inside
from autoreg_ui.lessons.inside import figures as figs
from autoreg_ui.lessons.inside import keys, questions, text
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import session_or_start


def render() -> None:
    """Draw the page; its entry file (``pages/inside.py``) calls this on every run."""
    state = st.session_state
    bundle = lesson_page.set_up("Inside generation", "inside", questions.QUESTIONS, text.INTRO)
    session = session_or_start()
    if session is None:
        st.stop()
    inside.sweep_settle(state)
    tok = bundle.tokenizer

    guide.header(text.GUIDES, "1 · Training reads the whole text at once; generation cannot")
    explain(text.TEACHER_FORCING)
    pressed = controls.step_buttons(keys.INSIDE_PAGE)
    if pressed:
        controls.generate(pressed)
    rank_col, force_col = st.columns([1, 2], vertical_alignment="bottom")
    rank = rank_col.number_input("Rank to force", 2, 1000, 20, key=keys.INSIDE_FORCE_RANK)
    force_col.button(text.force_label(rank), key=keys.INSIDE_FORCE, on_click=inside.force_rank)
    messages.show()
    st.text(session.text)
    kept = run_and_keep(state, keys.INSIDE_TEACHER, measuring.stamp(bundle, tuple(session.ids)),
                        "Read this text in one pass (teacher forcing)", "One forward pass over the whole text…",
                        lambda: inside.read_in_one_pass(bundle, session), disabled=not session.records)
    if kept is not None:
        scored, branch = kept
        records = session.records[:len(scored.logprobs)]
        show_metrics(inside.teacher_numbers(session, scored))
        if len(scored.ids) < len(session.ids):
            st.caption(text.CUT_SHORT)
        show_chart(figs.teacher_figure([r.index for r in records], [r.logprob for r in records],
                                       scored.logprobs, [r.forced for r in records]), key=keys.INSIDE_TEACHER_FIG,
                   filename="teacher-forcing-vs-steps")
        if branch is None:
            st.info(text.FORCE_SOMETHING)
        else:
            st.markdown(text.exposure_bias(branch.step))
            show_side_by_side(tok, text.BRANCH_CAPTIONS, branch.actual, branch.own)
        st.dataframe(inside.teacher_rows(tok, records, scored), hide_index=True, key=keys.INSIDE_TEACHER_ROWS)

    guide.header(text.GUIDES, "2 · The logit lens: a guess after every layer")
    explain(text.LOGIT_LENS)
    n_steps = len(session.records)
    inside.clamp(state, keys.INSIDE_LENS_STEP, 1, n_steps + 1, max(1, n_steps))
    step = st.number_input(text.lens_step_label(n_steps), 1, n_steps + 1, key=keys.INSIDE_LENS_STEP)
    context, target = inside.lens_target(session, int(step))
    lens_on = measuring.stamp(bundle, tuple(context), target)
    if st.button("Read every layer", key=keys.INSIDE_LENS.run):
        try:
            measuring.keep(state, keys.INSIDE_LENS.kept,
                           measuring.Kept(lens_on, lens.logit_lens(bundle, context, target)))
        except ValueError as exc:
            st.warning(str(exc))
    reading = getattr(measuring.kept(state, keys.INSIDE_LENS.kept, lens_on), "result", None)
    if reading is not None:
        st.write(text.lens_summary(tok, reading))
        show_chart(figs.lens_target_figure(tok, reading), key=keys.INSIDE_LENS_TARGET_FIG, filename="logit-lens-target")
        show_chart(figs.lens_figure(tok, reading), key=keys.INSIDE_LENS_GRID_FIG, filename="logit-lens-grid")

    guide.header(text.GUIDES, "3 · Prefill vs decode, in the units people quote")
    explain(text.PREFILL_VS_DECODE)
    choice = st.radio("Prompt for sections 3 and 4", inside.PROMPT_CHOICES, horizontal=True,
                      key=keys.INSIDE_PROMPT_CHOICE)
    n_new = int(st.number_input("New tokens", 2, inside.MAX_NEW, 32, key=keys.INSIDE_PHASE_NEW))
    prompt_ids = inside.measurement_prompt(bundle, session, choice, room=inside.MAX_NEW)
    st.caption(inside.prompt_caption(prompt_ids, choice))
    run = run_and_keep(state, keys.INSIDE_PHASES, measuring.stamp(bundle, tuple(prompt_ids), n_new),
                       "Measure time to first token and tokens per second",
                       text.phases_spinner(len(prompt_ids), n_new),
                       lambda: phases.greedy_run(bundle, prompt_ids, n_new))
    if run is not None:
        show_metrics(inside.phase_numbers(run))

    lengths = phases.sweep_lengths(len(prompt_ids), bundle.spec.max_positions)
    sweep_on = measuring.stamp(bundle, tuple(prompt_ids[:lengths[-1]]))
    go_col, stop_col = st.columns([3, 1])
    start = go_col.button(text.sweep_label(lengths), key=keys.INSIDE_SWEEP.run)
    stop_col.button("Stop", key=keys.INSIDE_SWEEP.stop, disabled=not start, help="What was measured is kept.")
    st.caption(text.SWEEP_METHOD)
    if start:
        bar = st.progress(0.0, text="Warm-up…")  # each update of the bar is where a Stop click lands
        inside.run_sweep(state, bundle, prompt_ids, sweep_on, lengths, lambda done, said: bar.progress(done, text=said))
        bar.empty()
    sweep = inside.sweep_of(state, sweep_on)
    if sweep is not None and sweep.points:
        if sweep.stopped:
            st.warning(text.sweep_stopped(len(sweep.points), len(sweep.lengths)))
        st.write(text.sweep_sentence(sweep.points[-1]))
        show_chart(figs.sweep_figure(sweep.points), key=keys.INSIDE_SWEEP_FIG, filename="prefill-sweep")

    st.subheader(text.WORKED_TITLE)
    counts = phases.worked_counts(bundle.spec, text.WORKED_PROMPT, text.WORKED_NEW)
    st.dataframe(inside.worked_rows(counts), hide_index=True, key=keys.INSIDE_WORKED_COUNTS)
    with guide.derivation(text.WORKED_DERIVATION):
        st.markdown(text.WORKED_COUNTING)
    worked = run_and_keep(state, keys.INSIDE_EXAMPLE,
                          measuring.stamp(bundle, text.WORKED_PROMPT, text.WORKED_NEW),
                          "Time it on this model", text.WORKED_SPINNER,
                          lambda: phases.greedy_run(bundle, inside.worked_prompt(bundle), text.WORKED_NEW,
                                                    stop_at_eos=False))
    if worked is not None:
        show_metrics(inside.phase_numbers(worked))

    guide.header(text.GUIDES, "4 · When the cache runs out")
    windows = inside.own_windows(bundle.config)
    explain(text.cache_runs_out(windows, family_name(bundle.config.model_type)))
    max_window = min(512, bundle.spec.max_positions)
    inside.clamp(state, keys.INSIDE_WINDOW_SIZE, 2, max_window, min(64, max_window))
    width = int(st.slider("Window W (positions each new token sees)", 2, max_window, key=keys.INSIDE_WINDOW_SIZE))
    compared = run_and_keep(state, keys.INSIDE_WINDOW, measuring.stamp(bundle, tuple(prompt_ids), n_new, width),
                            f"Generate {n_new} tokens with both caches", "Full cache, then sliding window…",
                            lambda: window.compare_window(bundle, prompt_ids, n_new, width))
    if compared is not None:
        show_metrics(inside.window_numbers(compared, inside.widest(windows)))
        show_side_by_side(tok, text.window_captions(width, inside.widest(windows)), compared.full.generated_ids,
                          compared.windowed.generated_ids)
        show_chart(figs.window_bytes_figure(compared.full.cache_bytes, compared.windowed.cache_bytes, width,
                                            inside.widest(windows)),
                   key=keys.INSIDE_WINDOW_FIG, filename=f"sliding-window-W{width}")
        st.caption(BYTE_UNITS_NOTE)

    guide.header(text.GUIDES, "5 · The whole loop on four tokens")
    explain(text.TOY)
    st.dataframe(inside.toy_score_rows(), hide_index=True, key=keys.INSIDE_TOY_SCORES)
    st.caption(text.TOY_TABLE_CAPTION)
    t1, t2, t3 = st.columns(3)
    toy_start = t1.selectbox(text.TOY_START, toy.VOCAB[:-1], key=keys.INSIDE_TOY_START)
    toy_temperature = t2.slider(text.TOY_TEMPERATURE, 0.0, 2.0, 0.0, 0.1, key=keys.INSIDE_TOY_TEMPERATURE)
    toy_seed = int(t3.number_input(text.TOY_SEED, 0, 2**31 - 1, 0, key=keys.INSIDE_TOY_SEED))
    toy_steps = toy.toy_trace(toy_start, SamplingConfig(temperature=toy_temperature, seed=toy_seed))
    st.dataframe(inside.toy_rows(toy_steps), hide_index=True, key=keys.INSIDE_TOY_TRACE)
    st.markdown(text.toy_summary([toy.VOCAB[s.pick] for s in toy_steps], toy_steps[-1].pick == toy.EOS, toy.MAX_STEPS))

    guide.header(text.GUIDES, "6 · From the last hidden state to logits: W·h + b")
    explain(text.UNEMBED)
    with guide.derivation(text.UNEMBED_DERIVATION):
        st.latex(text.UNEMBED_LATEX)
    read_ids = list(session.ids)[-lens.MAX_TOKENS:]
    kept = state.get(keys.INSIDE_UNEMBED_KEPT)
    if not (kept and kept[0] == (bundle.name, tuple(read_ids))):  # one pass per new text, not per rerun
        kept = state[keys.INSIDE_UNEMBED_KEPT] = ((bundle.name, tuple(read_ids)), unembed(bundle, read_ids))
    taken_apart = kept[1]
    st.markdown(text.unembed_sentence(taken_apart, len(read_ids)))
    st.dataframe(inside.unembed_rows(tok, taken_apart), hide_index=True, key=keys.INSIDE_UNEMBED_TABLE)
    show_chart(figs.template_figure([single_token_view(tok, t.token_id).label for t in taken_apart.top],
                                    [t.cosine for t in taken_apart.top], [t.row_norm for t in taken_apart.top]),
               key=keys.INSIDE_UNEMBED_FIG, filename="logits-as-templates")


def run_and_keep(state: MutableMapping, job: site_keys.JobKeys, measured_on: tuple, label: str, spinner: str,
                 compute: Callable[[], object], disabled: bool = False):
    """The job's button: pressed, ``compute()`` runs under a spinner and its result is kept with its stamp.
    Returns the kept result if it was measured on ``measured_on`` (pressed now or earlier), else None."""
    if st.button(label, key=job.run, disabled=disabled):
        with st.spinner(spinner):
            inside.compute_and_keep(state, job, measured_on, compute)
    return inside.kept_result(state, job, measured_on)


def show_metrics(rows: list[inside.Metric]) -> None:
    """One metric per column: label, value, and what it means on hover."""
    for col, (label, value, why) in zip(st.columns(len(rows)), rows):
        col.metric(label, value, help=why)


def show_side_by_side(tokenizer, captions: tuple[str, str], first: list[int], second: list[int]) -> None:
    """Two continuations in two columns, each under its caption and marked where they part."""
    for col, caption, marked in zip(st.columns(2), captions, inside.side_by_side(tokenizer, first, second)):
        col.caption(caption)
        col.text(marked)
