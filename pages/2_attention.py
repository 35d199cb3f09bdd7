"""Attention and the KV cache: where the new token looked, the growing causal triangle, the cache."""
import streamlit as st

from autoreg_core import attention_view as av
from autoreg_core.attention import supports_attention
from autoreg_core.cache import worked_example
from autoreg_core.spec import PRESETS, dtype_name
from autoreg_ui import attention_controls as ac, keys, links, memory_calc, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.controls import step_row
from autoreg_ui.presenter import explain
from autoreg_ui.figures import attention as fig_att, cache as fig_cache
from autoreg_ui.format import BYTE_UNITS_NOTE, human_bytes
from autoreg_ui.state import current_bundle, session_or_start

MAX_TRIANGLE = 256  # the heatmap shows at most this many of the latest positions

st.title("Attention and the KV cache")
st.caption("Every decode step feeds one token in. Its query looks at the keys of every token already in "
           "the KV cache, mixes their values, and then its own K and V are appended as one new row.")

bundle = current_bundle()
if bundle is None:
    st.stop()
session = session_or_start()
if session is None:
    st.info("Start a session on the *Step through generation* page (type a prompt there).")
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
    st.info(f"Attention capture needs a Llama-style model; {type(bundle.model).__name__} is not one. "
            "The cache sections below still work.")

st.header("1 · Where the new token looked")
left, right = st.columns([3, 2])
with right:
    st.markdown("With the cache, a decode step computes one query $q_t$ (per head) and reads the cached "
                "keys and values of all $t$ positions:")
    st.latex(r"a_t=\operatorname{softmax}\!\Big(\frac{q_t K_{\le t}^{\top}}{\sqrt{d}}\Big)")
    st.latex(r"o_t = a_t\,V_{\le t}")
    st.markdown(f"Here $d={D}$ and $K$, $V$ are ${N}\\times{D}$ per head, so $a_t$ has exactly **{N}** weights "
                "that add up to 1, one per cached token. They never look ahead: the future is not in the cache yet.")
with left:
    if pic.latest is None:
        st.info("Nothing has been through the model yet.")
    else:
        qpos, row = pic.latest
        what = f"the token of decode step {pic.n_steps}" if pic.n_steps else "the last prompt token, before any step"
        st.markdown(f"Query: position **{qpos}** {ac.inline_code(pic.labels[qpos])}, {what}. {where}.")
        if row is None:
            st.warning("This row was not captured: the step was taken on a page that does not record attention. "
                       "Steps taken here are recorded.")
            ac.backfill_offer(session, "latest")
        else:
            weights = av.select_heads(row, layer, head)
            st.markdown(fig_att.attention_strip_html(pic.labels[:qpos + 1], weights, qpos, P),
                        unsafe_allow_html=True)
            show_chart(fig_att.attention_bar_figure(pic.labels, weights, P, f"{where}: query {qpos} over "
                                                    f"{qpos + 1} cached keys"),
                       key=keys.ATT_BAR_CHART, filename=f"attention-layer{layer}-query{qpos}", width="stretch")
            if st.toggle("Show all heads of this layer", key=keys.ATT_ALL_HEADS):
                show_chart(fig_att.heads_grid_figure(pic.labels, row[layer].numpy(), gqa.kv_of_query,
                           f"Layer {layer}: all {H} heads for query {qpos} (colour = shared K/V head)"),
                           key=keys.ATT_HEADS_CHART, filename=f"attention-layer{layer}-all-heads", width="stretch")

st.header("2 · The triangle, one row per step")
if N == 0:
    st.info("Nothing has been through the model yet.")
else:
    explain(f"Row $q$ is where the token at position $q$ looked; columns are the cached keys. The **{P} prefill "
            "rows** (grey strip) came from one pass over the prompt; each **decode step** (blue strip) added one "
            f"row, one key longer. Above the diagonal is the future: masked, weight 0. Now: {N} rows, "
            f"{pic.n_steps} decode steps.")
    n_missing = pic.sources.count(av.MISSING)
    if n_missing:
        st.warning(f"{n_missing} of {N} rows were not captured (steps taken with attention capture off). "
                   "They are left grey, not guessed.")
        ac.backfill_offer(session, "triangle")
    first = max(0, N - MAX_TRIANGLE)
    if first:
        st.caption(f"The sequence has {N} positions; the chart shows the last {MAX_TRIANGLE} queries and keys "
                   f"(positions {first}–{N - 1}) so the page stays light.")
    show_chart(fig_att.triangle_figure(pic.z[first:, first:], pic.labels[first:N], pic.sources[first:], P,
                                       f"{where}: {N - first} queries × {N - first} keys", first=first),
               key=keys.ATT_TRIANGLE_CHART, filename=f"attention-triangle-layer{layer}", width="stretch")

st.header("3 · Grouped-query attention")
c1, c2 = st.columns([3, 2])
show_chart(fig_att.gqa_figure(gqa.kv_of_query, KV, head), key=keys.ATT_GQA_CHART, filename="attention-gqa",
           where=c1, width="stretch")
now = max(N, 1)
with_gqa, without_gqa = spec.cache_bytes(now), spec.without_gqa().cache_bytes(now)
c2.markdown(f"{bundle.name} has **{H} query heads** but caches only **{KV} K/V heads**: each group of {gqa.group} "
            "query heads reads the same cached keys and values. Queries are never cached, so only K and V count. "
            f"At {now} positions the cache holds {human_bytes(with_gqa)}; with one K/V per query head it would be "
            f"{human_bytes(without_gqa)}, **{without_gqa / with_gqa:g}× more**.")
for kv in range(KV):
    c2.caption(f"K/V head {kv} ← query heads {', '.join(map(str, gqa.queries_of(kv)))}")

st.header("4 · The KV cache")
st.caption(BYTE_UNITS_NOTE)
formula = spec.cache_bytes(pic.positions)
st.latex(fig_cache.FORMULA_LATEX)
st.latex(fig_cache.formula_latex(spec, pic.positions))
c1, c2 = st.columns([2, 3])
with c1:
    st.metric("Measured from the tensors", human_bytes(pic.measured), help=f"{pic.measured:,} bytes")
    st.metric("Formula", human_bytes(formula), help=f"{formula:,} bytes")
    if pic.measured == formula:
        st.success(f"Equal, byte for byte: {formula:,} B. Each new token adds {spec.cache_bytes_per_position:,.0f} B.")
    else:
        st.error(f"Measured {pic.measured:,} B differs from the formula {formula:,} B.")
    if pic.shapes:
        st.markdown(f"Per layer: K `{list(pic.shapes[0].keys)}` and V `{list(pic.shapes[0].values)}` = "
                    f"[batch, kv_heads, positions, head_dim], {pic.shapes[0].dtype}.")
show_chart(fig_cache.cache_growth_figure(pic.timeline, spec.cache_bytes_per_position),
           key=keys.ATT_GROWTH_CHART, filename="kv-cache-growth", where=c2, width="stretch")
with st.expander(f"K and V shapes in all {len(pic.shapes)} layers at this step"):
    st.dataframe(fig_cache.shapes_table(pic.shapes), hide_index=True, key=keys.ATT_SHAPES_TABLE)
ex = worked_example(spec)
st.markdown(f"**The worked example, with this model's numbers.** A {ex.prompt_tokens}-token prompt, then "
            f"{ex.new_tokens} new tokens, on {bundle.name} ({dtype_name(bundle.dtype)} cache): the prefill writes "
            f"{ex.prompt_tokens} positions at once, {human_bytes(ex.after_prefill)}; each new token adds "
            f"{human_bytes(ex.per_token)}; once the {ex.new_tokens}th is fed in, the cache holds {ex.positions} "
            f"positions: **{human_bytes(ex.at_end)}** ({ex.at_end:,} bytes).")


@st.fragment
def memory_calculator() -> None:
    """A fragment: moving its widgets reruns only this section, not the attention above."""
    st.header("5 · Memory calculator")
    choices = memory_calc.presets(spec)
    calc = memory_calc.widgets(choices, bundle.name)
    cache_b, no_gqa = calc.cache_bytes(), calc.without_gqa().cache_bytes()
    st.caption(f"{calc.name}: {calc.n_layers} layers, {calc.n_heads} query heads, {calc.n_kv_heads} K/V heads of "
               f"{calc.head_dim}, {calc.n_params / 1e6:,.0f} M parameters. {calc.note}.")
    st.latex(fig_cache.formula_latex(calc, calc.seq_len, calc.batch))
    c1, c2 = st.columns([2, 3])
    c1.metric("KV cache", human_bytes(cache_b), help=f"{cache_b:,} bytes")
    c1.metric("Weights", human_bytes(calc.weight_bytes), help=f"{calc.n_params:,} parameters × "
              f"{calc.weight_bytes_per_param:g} B")
    c1.markdown(f"The cache is **{cache_b / calc.weight_bytes:.2f}×** the weights. It grows with every token and every "
                "sequence in the batch; the weights do not, and quantising the weights leaves the cache as it is."
                + (f" Without GQA ({calc.n_heads} K/V heads) the cache would be {human_bytes(no_gqa)}."
                   if no_gqa != cache_b else ""))
    show_chart(fig_cache.memory_figure(calc), key=keys.ATT_MEMORY_CHART, filename="kv-cache-memory-calculator",
               where=c2, width="stretch")
    big = PRESETS["70B model with GQA, 128K context"]
    st.caption(f"At long context the cache outgrows everything: a 70B model with GQA keeps "
               f"{human_bytes(big.cache_bytes())} of 16-bit cache for one 128K-token sequence.")


memory_calculator()

st.header("6 · Prefill vs decode, measured")
times = pic.times
if times is None:
    st.info("Take a decode step (Next token) to compare its time with the prefill.")
else:
    c1, c2 = st.columns([3, 2])
    show_chart(fig_cache.phase_times_figure(times.prefill_ms_per_token, times.decode_ms_median,
                                            times.prefill_tokens), key=keys.ATT_PHASE_CHART,
               filename="prefill-vs-decode-times", where=c1, width="stretch")
    c2.markdown(f"Prefill: {times.prefill_ms:.1f} ms for {times.prefill_tokens} prompt tokens = "
                f"**{times.prefill_ms_per_token:.2f} ms per token**. Decode step: **{times.decode_ms_median:.2f} "
                f"ms** (median of {times.decode_steps} forward passes), {times.ratio:.1f}× the prefill cost per token."
                "\n\nPrefill pushes many tokens through each weight matrix at once, so it is limited by arithmetic "
                "(compute-bound); a decode step reads every weight and the whole cache to produce one token, so it "
                "is limited by how fast memory can be read (memory-bandwidth-bound).")
    if times.prefill_tokens < 8:
        c2.caption("With a very short prompt the prefill has little to share per token; try a longer prompt.")
