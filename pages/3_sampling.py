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
from autoreg_ui.figures.beam import beam_tree_figure, beams_frame
from autoreg_ui.figures.sampling import draw_figure, draws_figure, pipeline_figure, strategies_figure, sweep_figure
from autoreg_ui.presenter import explain
from autoreg_ui.state import current_bundle, kept_prompt

st.title("Sampling lab")
explain("The model only gives **logits**, one score per token of the vocabulary. How the next token is "
        "*chosen* from them is a separate, cheap piece of arithmetic: **temperature**, **top-k**, **top-p "
        "(nucleus)** and **min-p** reshape the distribution, then one token is drawn. Everything here works "
        "on one cached set of logits, so moving a slider never runs the model.")
bundle = current_bundle()
if bundle is None:
    st.stop()
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
    with right:
        st.markdown("**Softmax with temperature**")
        st.latex(r"p_i = \frac{e^{z_i/T}}{\sum_j e^{z_j/T}}")
        st.markdown(text.temperature_text(pipe, label))
        st.markdown("**Top-k** keeps the k highest logits. **Nucleus (top-p)** keeps the smallest set of top "
                    "tokens whose mass reaches p:")
        st.latex(r"\textstyle\sum_{i \in V_p} p_i \ge p,\ |V_p| \text{ smallest}")
        st.markdown("**Min-p** drops every token with")
        st.latex(r"p_i < p_{\min} \cdot \max_j p_j")
        st.markdown(text.filters_text(pipe))

    st.subheader("The draw")
    left, right = st.columns([5, 2])
    show_chart(draw_figure(draw, pipe.probs, {i: label(i) for i in draw.order[:60].tolist()}),
               key=keys.LAB_DRAW_CHART, filename=f"sampling-draw-seed{seed}", where=left)
    right.markdown(text.draw_text(draw, pipe, seed, label))
    right.markdown("Inverse CDF: line the kept tokens up, each owning an interval as wide as its probability; "
                   "draw u uniformly in [0, 1) and take the token whose interval holds it.")
    right.caption("The engine (like generate) draws with torch.multinomial, a different but equivalent way to "
                  "sample the same distribution, so for the same seed its token can differ.")

    st.header("2 · Draw many")
    left, right = st.columns([1, 3])
    lab.draws_control(state, left)
    if many.capped:
        messages.say(f"{int(state[keys.LAB_N]):,} is above the cap; drawing {many.n:,}.")
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
    right.markdown("As T → 0 the top token takes all the mass (greedy); as T grows the distribution flattens "
                   "towards uniform. The dashed line is the lab's temperature.")
    st.caption(f"This section redrew in {(time.perf_counter() - t_start) * 1000:.0f} ms ({math_ms:.0f} ms of "
               "sampling math), measured; no forward pass.")


@st.fragment
def strategies_section() -> None:
    st.header("4 · Strategies side by side")
    lab.strategy_controls(state)
    rows = compare_strategies(source.logits, lab.strategies(state))
    ids = top_token_ids(source.logits, 12)
    show_chart(strategies_figure(rows, ids, [label(i) for i in ids]), key=keys.LAB_STRATEGIES_CHART,
               filename="sampling-strategies")
    st.dataframe(text.strategies_table(rows), hide_index=True, key=keys.LAB_STRATEGIES_TABLE)
    st.caption("Same logits, temperature 1 unless named. Entropy H = −Σ p log₂ p in bits: 0 means certain; a "
               f"uniform choice over all {bundle.spec.vocab:,} tokens would be "
               f"{text.uniform_bits(bundle.spec.vocab):.1f}.")


@st.fragment
def continuations_section() -> None:
    st.header("5 · Continuations")
    explain("K continuations of M tokens under two strategies, all K in one batch on one KV cache (one forward "
            "pass per step). Greedy is deterministic: its K continuations are identical and often loop; high "
            "temperature drifts away from the topic.")
    configs = lab.presets(state)
    run = lab.continuation_controls(state, list(configs))
    if not lab.fits(source, bundle, run.m):
        messages.say(f"The context is too long for {run.m} more tokens ({bundle.spec.max_positions} positions at most).")
        messages.show()
    elif st.button("Generate continuations", key=keys.LAB_CONT_RUN, type="primary"):
        bar = st.progress(0.0, text="Generating…")
        results = lab.run_continuations(bundle, source, configs, run, on_step=lambda which, done, m: bar.progress(
            (which * m + done) / (2 * m), text=f"strategy {'AB'[which]}: token {done} of {m}"))
        bar.empty()
        lab.store(state, keys.LAB_CONT_RESULT, source, run, results)
    kept = lab.stored(state, keys.LAB_CONT_RESULT, source)
    if kept is None:
        st.caption("Press **Generate continuations**: it runs the model.")
        return
    if kept.settings != run:
        st.caption("Shown: the last run; its settings differ from the ones above (press the button to redo).")
    for col, tag, res in zip(st.columns(2), "AB", kept.result):
        col.subheader(f"{tag}: {res.name}")
        for box, (name, value) in zip(col.columns(4), text.continuation_metrics(res)):
            box.metric(name, value)
        col.dataframe(text.continuations_table(res), hide_index=True, key=f"{keys.LAB_CONT_TABLE}_{tag}")
        col.caption(f"{res.steps} decode steps, {res.forward_passes} forward passes, {res.time_ms / 1000:.1f} s, "
                    "measured.")
    st.caption("Sum log-prob: Σ log p(token | everything before) under the model's own softmax. distinct-2: distinct "
               "token pairs ÷ all token pairs over the K texts. Repetition: share of 3-token runs already seen "
               "earlier in the same text.")


@st.fragment
def beam_section() -> None:
    st.header("6 · Beam search")
    explain("Keep the B best partial sequences, extend each by every token, and keep the B best of all "
            "extensions. A beam that emits EOS (or reaches the last step) is set aside as a finished hypothesis. "
            "Width 1 is (almost) greedy.")
    st.latex(r"\text{score}(y) = \frac{1}{|y|^{\alpha}}\sum_{t=1}^{|y|} \log p(y_t \mid x, y_{<t})")
    explain("Running beams are ranked by the raw sum of log-probs; the length penalty (sum log p / length^α) "
            "is applied to finished hypotheses. α > 0 favours longer finished hypotheses; α = 0 ranks them by "
            "the plain sum too.")
    settings, tree = lab.beam_controls(state), st.empty()
    context_label = "…" + text.context_text(bundle.tokenizer, source.ids, last=3)
    if not lab.fits(source, bundle, settings.max_new_tokens):
        messages.say(f"The context is too long for {settings.max_new_tokens} more tokens.")
        messages.show()
    elif st.button("Run beam search", key=keys.LAB_BEAM_RUN, type="primary"):
        def live(partial) -> None:
            show_chart(beam_tree_figure(partial, text.beam_labels(partial, label), context_label),
                       key=f"{keys.LAB_BEAM_LIVE}_{partial.steps}", filename="beam-tree", where=tree,
                       export=False, keep=False)
        with st.spinner("Beam search on the model…"):
            lab.store(state, keys.LAB_BEAM_RESULT, source, settings,
                      beam_search(bundle, source.prefix, settings, on_step=live))
    kept = lab.stored(state, keys.LAB_BEAM_RESULT, source)
    if kept is None:
        st.caption("Press **Run beam search**: it runs the model, one forward pass per step for all beams, "
                   "reordering the KV cache to follow the surviving beams.")
        return
    res = kept.result
    show_chart(beam_tree_figure(res, text.beam_labels(res, label), context_label), key=keys.LAB_BEAM_CHART,
               filename="beam-tree", where=tree)
    if kept.settings != settings:
        st.caption("Shown: the last run; its settings differ from the sliders (press the button to redo).")
    st.dataframe(beams_frame(res, lambda ids: sequence_text(bundle.tokenizer, ids)), hide_index=True,
                 key=keys.LAB_BEAM_TABLE)
    st.markdown(text.beam_text(res))
    if text.greedy_beats_beams(res):
        st.info("Here the greedy path is *more* likely than every beam: beam search is a heuristic, and greedy's "
                "prefix fell out of the top B at some step (look for its tokens among the grey pruned nodes). "
                "Wider beams or another length penalty may recover it.")


pipeline_section()
strategies_section()
continuations_section()
beam_section()
