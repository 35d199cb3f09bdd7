"""Attention and the KV cache: where the new token looked, the growing causal triangle, the cache."""
import streamlit as st

from autoreg_core import attention_view as av
from autoreg_core.attention import supports_attention
from autoreg_core.cache import worked_example
from autoreg_core.spec import PRESETS, dtype_name
from autoreg_ui import attention_controls as ac, keys, links, memory_calc, messages
from autoreg_ui import attention_text as text
from autoreg_ui.charts import show_chart
from autoreg_ui.controls import step_row
from autoreg_ui.presenter import explain
from autoreg_ui.figures import attention as fig_att, cache as fig_cache
from autoreg_ui.format import BYTE_UNITS_NOTE, human_bytes
from autoreg_ui.state import bundle_or_stop, session_or_start

st.title("Attention and the KV cache")
st.caption(text.CAPTION)

bundle = bundle_or_stop()
session = session_or_start()
if session is None:
    st.info(text.NO_SESSION)
    st.stop()
spec = bundle.spec
L, H, KV, D = spec.n_layers, spec.n_heads, spec.n_kv_heads, spec.head_dim
capturable = supports_attention(bundle.model)

step_row(keys.ATT_STEP, capture_attention=capturable)
links.apply_layer_head(st.query_params, st.session_state, L, H)
ac.settle_layer_head(st.session_state, L, H)
messages.show()
av.ensure_prefill(session, capture=capturable)
gqa = av.gqa_info(H, KV)

c1, c2 = st.columns([2, 3])
layer = c1.slider("Layer", 0, L - 1, key=keys.ATT_LAYER, help=f"{L} decoder layers, 0 = closest to the input.")
head = ac.head_index(c2.selectbox("Head", ac.head_options(H), key=keys.ATT_HEAD,
                                  format_func=lambda h: ac.head_label(h, gqa)))
where = f"Layer {layer}, {ac.head_name(head, H)}"
pic = ac.read(session, layer, head)
P, N = session.prompt_len, pic.n_rows
if not capturable:
    st.info(text.no_capture(type(bundle.model).__name__))

st.header("1 · Where the new token looked")
left, right = st.columns([3, 2])
with right:
    st.markdown(text.DECODE_STEP_INTRO)
    st.latex(text.SOFTMAX_LATEX)
    st.latex(text.MIX_LATEX)
    st.markdown(text.weights_text(D, N))
with left:
    if pic.latest is None:
        st.info(text.NOTHING_YET)
    else:
        qpos, row = pic.latest
        st.markdown(text.query_text(qpos, ac.inline_code(pic.labels[qpos]), pic.n_steps, where))
        if row is None:
            st.warning(text.NOT_CAPTURED)
            ac.backfill_offer(session, "latest")
        else:
            weights = av.select_heads(row, layer, head)
            st.markdown(fig_att.attention_strip_html(pic.labels[:qpos + 1], weights, qpos, P),
                        unsafe_allow_html=True)
            show_chart(fig_att.attention_bar_figure(pic.labels, weights, P, text.bar_title(where, qpos)),
                       key=keys.ATT_BAR_CHART, filename=f"attention-layer{layer}-query{qpos}", width="stretch")
            if st.toggle("Show all heads of this layer", key=keys.ATT_ALL_HEADS):
                show_chart(fig_att.heads_grid_figure(pic.labels, row[layer].numpy(), gqa.kv_of_query,
                                                     text.heads_title(layer, H, qpos)),
                           key=keys.ATT_HEADS_CHART, filename=f"attention-layer{layer}-all-heads", width="stretch")

st.header("2 · The triangle, one row per step")
if N == 0:
    st.info(text.NOTHING_YET)
else:
    explain(text.triangle_text(P, N, pic.n_steps))
    n_missing = pic.sources.count(av.MISSING)
    if n_missing:
        st.warning(text.missing_rows(n_missing, N))
        ac.backfill_offer(session, "triangle")
    first = ac.first_shown(N)
    if first:
        st.caption(text.last_rows_caption(N, ac.MAX_TRIANGLE, first))
    show_chart(fig_att.triangle_figure(pic.z[first:, first:], pic.labels[first:N], pic.sources[first:], P,
                                       text.triangle_title(where, N - first), first=first),
               key=keys.ATT_TRIANGLE_CHART, filename=f"attention-triangle-layer{layer}", width="stretch")

st.header("3 · Grouped-query attention")
c1, c2 = st.columns([3, 2])
show_chart(fig_att.gqa_figure(gqa.kv_of_query, KV, head), key=keys.ATT_GQA_CHART, filename="attention-gqa",
           where=c1, width="stretch")
c2.markdown(text.gqa_text(bundle.name, spec, gqa.group, max(N, 1)))
for kv in range(KV):
    c2.caption(text.kv_group_caption(kv, gqa.queries_of(kv)))

st.header("4 · The KV cache")
st.caption(BYTE_UNITS_NOTE)
formula = spec.cache_bytes(pic.positions)
st.latex(fig_cache.FORMULA_LATEX)
st.latex(fig_cache.formula_latex(spec, pic.positions))
c1, c2 = st.columns([2, 3])
with c1:
    st.metric("Measured from the tensors", human_bytes(pic.measured), help=f"{pic.measured:,} bytes")
    st.metric("Formula", human_bytes(formula), help=f"{formula:,} bytes")
    equal, check = text.cache_check(pic.measured, formula, spec.cache_bytes_per_position)
    (st.success if equal else st.error)(check)
    if pic.shapes:
        st.markdown(text.layer_shapes_text(pic.shapes[0]))
show_chart(fig_cache.cache_growth_figure(pic.timeline, spec.cache_bytes_per_position),
           key=keys.ATT_GROWTH_CHART, filename="kv-cache-growth", where=c2, width="stretch")
with st.expander(f"K and V shapes in all {len(pic.shapes)} layers at this step"):
    st.dataframe(fig_cache.shapes_table(pic.shapes), hide_index=True, key=keys.ATT_SHAPES_TABLE)
st.markdown(text.worked_example_text(worked_example(spec), bundle.name, dtype_name(bundle.dtype)))


@st.fragment
def memory_calculator() -> None:
    """A fragment: moving its widgets reruns only this section, not the attention above."""
    st.header("5 · Memory calculator")
    choices = memory_calc.presets(spec)
    calc = memory_calc.widgets(choices, bundle.name)
    cache_b, no_gqa = calc.cache_bytes(), calc.without_gqa().cache_bytes()
    st.caption(text.calculator_caption(calc))
    st.latex(fig_cache.formula_latex(calc, calc.seq_len, calc.batch))
    c1, c2 = st.columns([2, 3])
    c1.metric("KV cache", human_bytes(cache_b), help=f"{cache_b:,} bytes")
    c1.metric("Weights", human_bytes(calc.weight_bytes), help=text.weights_help(calc))
    c1.markdown(text.cache_vs_weights(calc, cache_b, no_gqa))
    show_chart(fig_cache.memory_figure(calc), key=keys.ATT_MEMORY_CHART, filename="kv-cache-memory-calculator",
               where=c2, width="stretch")
    st.caption(text.long_context_caption(PRESETS["70B model with GQA, 128K context"]))


memory_calculator()

st.header("6 · Prefill vs decode, measured")
if (times := pic.times) is None:
    st.info(text.TAKE_A_STEP)
else:
    c1, c2 = st.columns([3, 2])
    show_chart(fig_cache.phase_times_figure(times.prefill_ms_per_token, times.decode_ms_median,
                                            times.prefill_tokens), key=keys.ATT_PHASE_CHART,
               filename="prefill-vs-decode-times", where=c1, width="stretch")
    c2.markdown(text.phase_text(times))
    if times.prefill_tokens < 8:
        c2.caption(text.SHORT_PROMPT)
