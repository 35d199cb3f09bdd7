"""Attention and the KV cache: where the new token looked, the growing causal triangle, the cache.

The page draws; the layer and head choice, the read of the session and the calculator's state are the
controller's (``controller``).
"""
import streamlit as st

from autoreg_core.engine.attention import supports_attention
from autoreg_core.engine.kv_cache import worked_example
from autoreg_core.engine.model_spec import PRESETS, ModelSpec, dtype_name
from autoreg_core.experiments import attention_rows as av
from autoreg_core.experiments.kv_exactness import recompute_check
from autoreg_ui import after_run, lesson_page, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.controls import open_section, step_row
from autoreg_ui.family_text import family_name
from autoreg_ui.format import BYTE_UNITS_NOTE, human_bytes
from autoreg_ui.lessons.attention import controller as ac
from autoreg_ui.lessons.attention import figures as fig_att
from autoreg_ui.lessons.attention import keys, questions, sliding_text, text
from autoreg_ui.lessons.attention import link_params as attention_links
from autoreg_ui.sharing import presenter
from autoreg_ui.sharing.presenter import explain
from autoreg_ui.state import keep_widget_values, session_or_start


def render() -> None:
    """Draw the page; its entry file (``pages/attention.py``) calls this on every run."""
    bundle = lesson_page.set_up("Attention and the KV cache", "attention", questions.QUESTIONS, caption=text.CAPTION)
    session = session_or_start()
    if session is None:
        st.info(text.NO_SESSION)
        st.stop()
    spec = bundle.spec
    L, H, KV, D = spec.n_layers, spec.n_heads, spec.n_kv_heads, spec.head_dim
    capturable = supports_attention(bundle.model)
    attention_links.apply(st.query_params, st.session_state, L, H)
    gqa = av.gqa_info(H, KV)
    presenting = presenter.active()


    def where_it_looked(pic: ac.Picture, layer: int, head: int | None, where: str) -> None:
        left, right = st.columns([3, 2])
        window = sliding_text.window_of(spec, layer)
        with right:
            st.markdown(sliding_text.decode_step_intro(window))
            st.latex(text.SOFTMAX_LATEX if window is None else sliding_text.SOFTMAX_LATEX_SLIDING)
            st.latex(text.MIX_LATEX if window is None else sliding_text.MIX_LATEX_SLIDING)
            st.markdown(text.weights_text(D, pic.n_rows) if window is None
                        else sliding_text.sliding_weights_text(D, pic.n_rows, window))
        with left:
            if pic.latest is None:
                st.info(text.NOTHING_YET)
                return
            qpos, row = pic.latest
            st.markdown(text.query_text(qpos, ac.inline_code(pic.labels[qpos]), pic.n_steps, where))
            if row is None:
                level, why, offer = ac.missing_row(capturable, family_name(bundle.config.model_type))
                getattr(st, level)(why)
                if offer:
                    backfill_offer(session, "latest")
                return
            weights = av.select_heads(row, layer, head)
            st.markdown(fig_att.attention_strip_html(pic.labels[:qpos + 1], weights, qpos, session.prompt_len),
                        unsafe_allow_html=True)
            st.caption(text.STRIP_LEGEND)
            show_chart(fig_att.attention_bar_figure(pic.labels, weights, session.prompt_len,
                                                    text.bar_title(where, qpos) if window is None
                                                    else sliding_text.sliding_bar_title(where, qpos, window)),
                       key=keys.ATT_BAR_CHART, filename=f"attention-layer{layer}-query{qpos}", width="stretch")
            if st.toggle("Show all heads of this layer", key=keys.ATT_ALL_HEADS):
                show_chart(fig_att.heads_grid_figure(pic.labels, row[layer].numpy(), gqa.kv_of_query,
                                                     text.heads_title(layer, H, qpos)),
                           key=keys.ATT_HEADS_CHART, filename=f"attention-layer{layer}-all-heads", width="stretch")


    def triangle(pic: ac.Picture, layer: int, head: int | None, where: str) -> None:
        P, N = session.prompt_len, pic.n_rows
        if N == 0:
            st.info(text.NOTHING_YET)
            return
        window = sliding_text.window_of(spec, layer)
        said = (text.triangle_text(P, N, pic.n_steps) if window is None
                else sliding_text.sliding_triangle_text(P, N, pic.n_steps, window))
        if not presenting:
            explain(said)
        if (n_missing := pic.sources.count(av.MISSING)) and capturable:
            st.warning(text.missing_rows(n_missing, N))
            backfill_offer(session, "triangle")
        if first := ac.first_shown(N):
            st.caption(text.last_rows_caption(N, ac.MAX_TRIANGLE, first))
        show_chart(fig_att.triangle_figure(pic.z[first:, first:], pic.labels[first:N], pic.sources[first:], P,
                                           text.triangle_title(where, N - first), first=first,
                                           height=fig_att.PRESENTER_TRIANGLE_HEIGHT if presenting else None,
                                           window=window),
                   key=keys.ATT_TRIANGLE_CHART, filename=f"attention-triangle-layer{layer}", width="stretch")
        if presenting:  # on a projector the chart comes first, right under the step buttons
            explain(said)


    def grouped_query(pic: ac.Picture, layer: int, head: int | None, where: str) -> None:
        c1, c2 = st.columns([3, 2])
        show_chart(fig_att.gqa_figure(gqa.kv_of_query, KV, head), key=keys.ATT_GQA_CHART, filename="attention-gqa",
                   where=c1, width="stretch")
        c2.markdown(text.gqa_text(bundle.name, spec, gqa.group, max(pic.n_rows, 1)))
        for kv in range(KV):
            c2.caption(text.kv_group_caption(kv, gqa.queries_of(kv)))


    def kv_cache(pic: ac.Picture, layer: int, head: int | None, where: str) -> None:
        st.caption(BYTE_UNITS_NOTE)
        formula = spec.cache_bytes(pic.positions)
        st.latex(fig_att.FORMULA_LATEX)
        st.latex(fig_att.formula_latex(spec, pic.positions))
        c1, c2 = st.columns([2, 3])
        c1.metric("Measured from the tensors", human_bytes(pic.measured), help=f"{pic.measured:,} bytes")
        c1.metric("Formula", human_bytes(formula), help=f"{formula:,} bytes")
        level, check = ac.cache_reading(pic.measured, formula, spec.cache_bytes_per_position, pic.shapes,
                                        pic.positions, spec.layer_windows, family_name(bundle.config.model_type))
        getattr(c1, level)(check)
        if pic.shapes:
            c1.markdown(text.layer_shapes_text(pic.shapes[0]))
        show_chart(fig_att.cache_growth_figure(pic.timeline, spec.cache_bytes_per_position, spec),
                   key=keys.ATT_GROWTH_CHART, filename="kv-cache-growth", where=c2, width="stretch")
        with st.expander(f"K and V shapes in all {len(pic.shapes)} layers at this step"):
            st.dataframe(fig_att.shapes_table(pic.shapes), hide_index=True, key=keys.ATT_SHAPES_TABLE)
        example = worked_example(spec)
        st.markdown(sliding_text.sliding_worked_example_text(example, spec, bundle.name, dtype_name(bundle.dtype))
                    if sliding_text.example_drops(spec, example)
                    else text.worked_example_text(example, bundle.name, dtype_name(bundle.dtype)))
        st.markdown(text.WHY_EXACT)
        if st.button(text.RECOMPUTE_BUTTON, key=keys.ATT_RECOMPUTE, disabled=not pic.positions):
            check = recompute_check(bundle, session)
            (st.success if check.within_rounding else st.warning)(text.recompute_text(check))
            st.dataframe(text.recompute_rows(check), hide_index=True, key=keys.ATT_RECOMPUTE_TABLE)


    def memory_calculator(pic: ac.Picture, layer: int, head: int | None, where: str) -> None:
        calculator_section(spec, bundle.name)


    def prefill_vs_decode(pic: ac.Picture, layer: int, head: int | None, where: str) -> None:
        if (times := pic.times) is None:
            st.info(text.TAKE_A_STEP)
            return
        c1, c2 = st.columns([3, 2])
        show_chart(fig_att.phase_times_figure(times.prefill_ms_per_token, times.decode_ms_median,
                                                times.prefill_tokens), key=keys.ATT_PHASE_CHART,
                   filename="prefill-vs-decode-times", where=c1, width="stretch")
        c2.markdown(text.phase_text(times))
        if times.prefill_tokens < 8:
            c2.caption(text.SHORT_PROMPT)


    # One section at a time: each chart the browser redraws costs it about 100 ms per click
    # (bench/click_cost.py), so Next token redraws the open section only.
    SECTIONS = {"1 · Where it looked": where_it_looked, "2 · Causal triangle": triangle,
                "3 · Grouped-query attention": grouped_query, "4 · KV cache": kv_cache,
                "5 · Memory calculator": memory_calculator, "6 · Prefill vs decode": prefill_vs_decode}


    @after_run.fragment
    def lesson() -> None:
        """A fragment: a step, a layer or head change or another section reruns this, not the whole app."""
        step_row(keys.ATT_STEP, capture_attention=capturable)
        ac.settle_layer_head(st.session_state, L, H)
        keep_widget_values(st.session_state, (*ac.KEPT, keys.ATT_ALL_HEADS))  # kept while their section is closed
        messages.show()
        av.ensure_prefill(session, capture=capturable)
        if capturable:
            ac.fill_on_arrival(session)  # a short text's missing rows: the picture, not a warning
        # on a projector the layer and the head come under the open section, so its chart starts under the step
        # buttons (the section's box is made first, so it shows first; it is drawn once the layer and head are read)
        views = st.container() if presenting else None
        c1, c2 = st.columns([2, 3])
        views = views or st.container()
        layer = c1.slider("Layer", 0, L - 1, key=keys.ATT_LAYER, help=f"{L} decoder layers, 0 = closest to the input.")
        head = ac.head_index(c2.selectbox("Head", ac.head_options(H), key=keys.ATT_HEAD,
                                          format_func=lambda h: ac.head_label(h, gqa)))
        pic = ac.read(session, layer, head)
        if not capturable:
            st.info(text.no_capture(family_name(bundle.config.model_type)))
        with views:
            open_section(SECTIONS, keys.ATT_SECTION, pic, layer, head, f"Layer {layer}, {ac.head_name(head, H)}",
                         guides=sliding_text.guides_for(spec, layer, pic.query))


    lesson()


def backfill_offer(session, where: str) -> None:
    """The backfill button where rows are missing, or why it cannot be offered (``where`` keeps keys apart)."""
    ok, why = av.can_backfill(session)
    if ok:
        st.button("Compute attention for the whole sequence", key=f"{keys.ATT_BACKFILL}_{where}",
                  on_click=ac.backfill, args=(session,),
                  help="One forward pass over all tokens on a fresh cache; fills the rows that were not captured.")
    else:
        st.caption(why)


def calculator_widgets(choices: dict[str, ModelSpec], loaded_name: str) -> ModelSpec:
    """Draw the calculator's row of widgets (after settling stale values) and return the chosen spec."""
    ac.settle(st.session_state, choices)
    c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 2])
    c1.selectbox("Model", list(choices), key=keys.ATT_PRESET, on_change=ac.load_preset,
                 args=(st.session_state, choices), format_func=lambda n: ac.preset_label(n, loaded_name))
    c2.select_slider("Sequence length (tokens)", ac.SEQ_OPTIONS, key=keys.ATT_SEQ, format_func=ac.seq_label)
    c3.slider("Batch size", 1, ac.MAX_BATCH, key=keys.ATT_BATCH)
    c4.selectbox("Weights", ac.PRECISION_NAMES, key=keys.ATT_PRECISION, help="Precision of the weights.")
    c5.selectbox("KV cache", ac.PRECISION_NAMES, key=keys.ATT_CACHE_PRECISION,
                 help="Precision of the cache: often 16 bits even when the weights are quantised to 4.")
    return ac.chosen(st.session_state, choices)


def calculator_section(loaded: ModelSpec, loaded_name: str) -> None:
    """The calculator: its widgets, the cache and weight sizes, and the bar chart of both."""
    calc = calculator_widgets(ac.presets(loaded), loaded_name)
    cache_b, no_gqa = calc.cache_bytes(), calc.without_gqa().cache_bytes()
    st.caption(text.calculator_caption(calc))
    if (too_long := text.beyond_context(calc)) is not None:
        st.warning(too_long)
    st.latex(fig_att.formula_latex(calc, calc.seq_len, calc.batch))
    c1, c2 = st.columns([2, 3])
    c1.metric("KV cache", human_bytes(cache_b), help=f"{cache_b:,} bytes")
    c1.metric("Weights", human_bytes(calc.weight_bytes), help=text.weights_help(calc))
    c1.markdown(text.cache_vs_weights(calc, cache_b, no_gqa))
    show_chart(fig_att.memory_figure(calc), key=keys.ATT_MEMORY_CHART, filename="kv-cache-memory-calculator",
               where=c2, width="stretch")
    st.caption(text.long_context_caption(PRESETS["70B model with GQA, 128K context"]))
