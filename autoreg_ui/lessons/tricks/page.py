"""More serving tricks: speculation's arithmetic, prefix caching, constrained decoding — each measured live."""
import pandas as pd
import streamlit as st

from autoreg_core.experiments import constrained_decoding as grammar
from autoreg_core.experiments import speculative_decoding as speculative
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_ui import guide, lesson_page, measuring, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.format import BYTE_UNITS_NOTE
from autoreg_ui.lessons.tricks import controller as tricks
from autoreg_ui.lessons.tricks import figures as figs
from autoreg_ui.lessons.tricks import keys, questions, text
from autoreg_ui.sharing import presenter
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import current_session


def render() -> None:
    """Draw the page; its entry file (``pages/tricks.py``) calls this on every run."""
    bundle = lesson_page.set_up(text.TITLE, keys.TRICKS_PAGE, questions.QUESTIONS, text.INTRO)

    # ---------------------------------------------------------------- 1 · speculation's arithmetic
    projector = presenter.active()  # one screen: the boxes on one row, the sliders beside their chart
    st.header("1 · Speculation's arithmetic")
    if projector:
        whatif_at, box_cols = st, st.columns(3, vertical_alignment="center")
    else:  # the what-if picture first, its guide and explanation under it
        whatif_at = st.container()
        box_cols = [st.container()] * 3
    guide.show(text.GUIDES, "1 · Speculation's arithmetic", where=box_cols[0])
    explain(text.SPEC, where=box_cols[1])
    with guide.derivation(text.SPEC_DERIVATION, where=box_cols[2]):
        st.markdown(text.SPEC_WORKING)
        st.latex(text.SPEC_LATEX)
    if projector:
        slider_col, chart_at = st.columns([1, 2.2])
        a_col = c_col = slider_col
    else:
        (a_col, c_col), chart_at = whatif_at.columns(2), None
    alpha = a_col.slider(text.WHATIF_ALPHA, 0.0, 1.0, 0.7, 0.05, key=keys.TRICKS_WHATIF_ALPHA, help=text.WHATIF_HELP)
    cost = c_col.slider(text.WHATIF_C, 0.0, 1.0, 0.1, 0.05, key=keys.TRICKS_WHATIF_C, help=text.WHATIF_HELP)
    whatif = spec_math.best_k(alpha, cost)
    whatif_at.markdown(text.best_k_sentence("What if", alpha, cost, whatif.k, whatif.speedup, whatif.pays,
                                            spec_math.MAX_K, whatif.next_adds))
    chart_at = chart_at or whatif_at.container()  # normally under the sentence; on a projector beside the sliders
    k_col, n_col = st.columns(2)
    k = k_col.slider(text.SPEC_K, 1, speculative.MAX_DRAFT, 4, key=keys.TRICKS_SPEC_K)
    max_new = n_col.slider(text.SPEC_MAX_NEW, 16, 96, 48, 8, key=keys.TRICKS_SPEC_MAX_NEW)
    st.caption(text.SPEC_METHOD)
    if measuring.run_controls(keys.TRICKS_SPEC, text.SPEC_RUN):
        measuring.launch(keys.TRICKS_SPEC.kept, "speculation's arithmetic", (bundle.name, k, max_new),
                         lambda p: tricks.spec_work(bundle, k, max_new, p))
    found = measuring.show_kept(keys.TRICKS_SPEC.kept, bundle.name)
    reads = found.result if found else []
    # the sliders' picture stays theirs; the measured drafts get a chart of their own right under the button
    show_chart(figs.speedup_figure([(text.WHATIF_CURVE, whatif)], text.WHATIF_TITLE,
                                   figs.PROJECTOR_HEIGHT if projector else figs.HEIGHT),
               key=keys.TRICKS_WHATIF_FIG, filename="speculation-speedup-over-k", where=chart_at)
    if reads:
        measured = [(f"{r.prompt} · {r.read.draft}", r.best) for r in reads]
        show_chart(figs.speedup_figure([(text.WHATIF_CURVE_BESIDE, whatif)] + measured, text.SPEC_CURVES_TITLE),
                   key=keys.TRICKS_SPEC_FIG, filename="speculation-speedup-measured")
        st.dataframe(pd.DataFrame(tricks.spec_rows(reads)), hide_index=True, key=keys.TRICKS_SPEC.table)
        for r in reads:
            m = r.read
            st.markdown(text.measured_sentence(r.prompt, m.draft, m.predicted_speedup, m.speedup,
                                               m.predicted_with_verify, m.verify))
            st.markdown(text.rounds_sentence(r.prompt, m.draft, m.predicted_tokens, m.tokens_per_round, m.runs))
            st.markdown(text.best_k_sentence(f"{r.prompt} · {m.draft}", m.alpha, m.c, r.best.k, r.best.speedup,
                                             r.best.pays, spec_math.MAX_K, r.best.next_adds))
        show_chart(figs.predicted_measured_figure([f"{r.prompt} · {r.read.draft}" for r in reads],
                                                  [r.read.predicted_speedup for r in reads],
                                                  [r.read.predicted_with_verify for r in reads],
                                                  [r.read.speedup for r in reads]),
                   key=keys.TRICKS_SPEC_BARS, filename="speculation-predicted-vs-measured")
    else:
        st.info(text.SPEC_NOTHING)

    # ---------------------------------------------------------------- 2 · prefix caching
    guide.header(text.GUIDES, "2 · Prefix caching: the class shares one prompt")
    explain(text.PREFIX)
    st.caption(text.PREFIX_STATS_CAPTION)
    values, budget = tricks.stats_values()
    for col, label, value in zip(st.columns(4), text.prefix_stat_labels(), values):
        col.metric(label, value)
    st.caption(budget)
    tabs = int(st.slider(text.PREFIX_TABS, 2, tricks.MAX_TABS, tricks.MAX_TABS, key=keys.TRICKS_PREFIX_TABS))
    st.caption(text.PREFIX_METHOD)
    if measuring.run_controls(keys.TRICKS_PREFIX, text.PREFIX_RUN):
        ids = tricks.demo_prompt_ids(bundle, current_session())
        measuring.launch(keys.TRICKS_PREFIX.kept, "prefix caching", (bundle.name, tabs, tuple(ids)),
                         lambda p: tricks.prefix_work(bundle, ids, tabs, p))
    if demo := measuring.show_kept(keys.TRICKS_PREFIX.kept, bundle.name):
        d = demo.result
        st.markdown(text.prefix_sentence(d.tabs, d.plain_ms, d.cached_ms, d.identical, d.held, d.hits, d.misses,
                                         d.budget))
        show_chart(figs.prefix_figure(d.tabs, d.plain_ms, d.cached_ms, d.hits, d.misses), key=keys.TRICKS_PREFIX_FIG,
                   filename="prefix-cache-many-tabs")
        st.caption(BYTE_UNITS_NOTE)

    # ---------------------------------------------------------------- 3 · constrained decoding
    guide.header(text.GUIDES, "3 · Constrained decoding: valid by construction")
    explain(text.GRAMMAR)
    kind = st.radio(text.GRAMMAR_KIND, grammar.KINDS, horizontal=True, key=keys.TRICKS_GRAMMAR_KIND)
    source_default, prompt_default = tricks.DEFAULTS[kind]
    s_col, p_col = st.columns(2)
    source_text = s_col.text_area(text.GRAMMAR_SOURCE, source_default, height=160, help=text.GRAMMAR_SOURCE_HELP[kind],
                                  key=f"{keys.TRICKS_GRAMMAR_SOURCE}_{kind}")
    prompt = p_col.text_area(text.GRAMMAR_PROMPT, prompt_default, height=160,
                             key=f"{keys.TRICKS_GRAMMAR_PROMPT}_{kind}")
    max_tokens = int(p_col.slider(text.GRAMMAR_MAX_NEW, 8, grammar.MAX_NEW, 40, key=keys.TRICKS_GRAMMAR_MAX_NEW))
    if measuring.run_controls(keys.TRICKS_GRAMMAR, text.GRAMMAR_RUN):
        try:
            source = tricks.parse_source(kind, source_text)
            measuring.launch(keys.TRICKS_GRAMMAR.kept, "constrained decoding", (bundle.name, kind, source_text, prompt),
                             lambda p: tricks.grammar_work(bundle, kind, source, prompt, max_tokens, p))
        except ValueError as exc:
            messages.say(str(exc), "error")
            messages.show()
    if (ran := measuring.show_kept(keys.TRICKS_GRAMMAR.kept, bundle.name)) and ran.result.kind == kind:
        run = ran.result
        for col, caption, one in zip(st.columns(2), text.GRAMMAR_CAPTIONS, (run.constrained, run.free)):
            col.caption(caption)
            answer = tricks.answer_text(bundle, one)
            col.text(answer)
            valid, reason = tricks.check_valid(kind, run.source, answer)
            col.markdown(text.validity(kind, valid, messages.plain(reason)))
        st.markdown(text.grammar_sentence(*tricks.summary(run.constrained)[:2], bundle.spec.vocab,
                                          *tricks.summary(run.constrained)[2:]))
        show_chart(figs.mask_figure([s.allowed for s in run.constrained.steps],
                                    [s.removed_mass for s in run.constrained.steps]),
                   key=keys.TRICKS_GRAMMAR_FIG, filename=f"grammar-mask-{kind.replace(' ', '-')}")
        st.caption(text.STEPS_CAPTION)
        st.dataframe(pd.DataFrame(tricks.step_rows(bundle, run.constrained)), hide_index=True,
                     key=keys.TRICKS_GRAMMAR_STEPS)
