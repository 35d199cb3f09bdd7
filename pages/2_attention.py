"""Attention and the KV cache: where the new token looked, the growing causal triangle, the cache."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from autoreg_core import attention_view as av
from autoreg_core import cache as kvc
from autoreg_core.attention import supports_attention
from autoreg_ui.figures import attention as fig_att
from autoreg_ui.figures import cache as fig_cache
from autoreg_ui.controls import step_buttons
from autoreg_ui.state import current_bundle, session_or_start

LAYER_KEY, HEAD_KEY = "att_layer", "att_head"
MEAN = -1  # head option: the mean over heads
MAX_TRIANGLE = 256  # the heatmap shows at most this many of the latest positions
CUSTOM_LOADED = "Loaded model"

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

L, H, KV, D = bundle.n_layers, bundle.n_heads, bundle.n_kv_heads, bundle.head_dim
capturable = supports_attention(bundle.model)

step_buttons(key="att", capture_attention=capturable, shortcut=True)
if "att_message" in st.session_state:
    st.warning(st.session_state.pop("att_message"))
av.ensure_prefill(session, capture=capturable)


# ---------------------------------------------------------------- layer / head from links or stale state
def _apply_link() -> None:
    """?layer=&head= in the URL set the widgets once per distinct link; bad values get a message."""
    link = (st.query_params.get("layer"), st.query_params.get("head"))
    if link == (None, None) or st.session_state.get("att_link_seen") == link:
        return
    st.session_state["att_link_seen"] = link
    notes = []
    layer, msg = av.parse_index(link[0], L, "layer")
    if msg:
        notes.append(msg)
    elif layer is not None:
        st.session_state[LAYER_KEY] = layer
    head, msg = av.parse_index(link[1], H, "head", allow_mean=True)
    if msg:
        notes.append(msg)
    elif head is not None:
        st.session_state[HEAD_KEY] = head
    st.session_state["att_link_msg"] = " ".join(notes)


_apply_link()
if st.session_state.get("att_link_msg") and st.session_state.get("att_link_seen") == (
        st.query_params.get("layer"), st.query_params.get("head")):  # only while the URL carries it
    st.warning(st.session_state["att_link_msg"])
if not isinstance(st.session_state.get(LAYER_KEY), int) or not 0 <= st.session_state[LAYER_KEY] < L:
    st.session_state[LAYER_KEY] = L // 2  # first visit, or a stale value from another model
if st.session_state.get(HEAD_KEY) not in [MEAN, *range(H)]:
    st.session_state[HEAD_KEY] = 0

gqa = av.gqa_info(H, KV)
P = session.prompt_len


def code(label: str) -> str:
    """A token label as inline code (backticks in the label would end the code span)."""
    return "`" + label.replace("`", "ˋ") + "`"


def _backfill() -> None:
    try:
        filled = av.backfill(session)
    except ValueError as exc:
        st.session_state["att_message"] = str(exc)
        return
    st.session_state["att_message_ok"] = f"Recomputed {filled} missing rows with one full forward pass."


def backfill_offer(where: str) -> None:
    ok, why = av.can_backfill(session)
    if ok:
        st.button("Compute attention for the whole sequence", key=f"att_backfill_{where}", on_click=_backfill,
                  help="One forward pass over all tokens on a fresh cache; fills the rows that were not captured.")
    else:
        st.caption(why)


if st.session_state.get("att_message_ok"):
    st.success(st.session_state.pop("att_message_ok"))

c1, c2 = st.columns([2, 3])
layer = c1.slider("Layer", 0, L - 1, key=LAYER_KEY, help=f"{L} decoder layers, 0 = closest to the input.")
head_opt = c2.selectbox(
    "Head", [MEAN, *range(H)], key=HEAD_KEY,
    format_func=lambda h: f"mean of all {H} heads" if h == MEAN else f"head {h} (reads K/V head {gqa.kv_of_query[h]})")
head = None if head_opt == MEAN else int(head_opt)
head_name = f"mean of {H} heads" if head is None else f"head {head}"

# One consistent picture of the session, read under its lock (a step may be running in another run).
with av.locked(session):
    labels = [v.label for v in session.views()]
    N = av.n_rows(session)
    n_steps = len(session.records)
    latest = av.latest_row(session)
    z, sources = av.triangle(session, layer, head)
    shapes = kvc.layer_shapes(session.cache)
    measured = kvc.measured_bytes(session.cache)
    positions = session.cache_len
    timeline = kvc.cache_timeline(session)
    times = kvc.phase_times(session)

if not capturable:
    st.info(f"Attention capture needs a Llama-style model; {type(bundle.model).__name__} is not one. "
            "The cache sections below still work.")

# ---------------------------------------------------------------- 1. where the new token looked
st.header("1 · Where the new token looked")
left, right = st.columns([3, 2])
with right:
    st.markdown("With the cache, a decode step computes one query $q_t$ (per head) and reads the cached "
                "keys and values of all $t$ positions:")
    st.latex(r"a_t=\operatorname{softmax}\!\Big(\frac{q_t K_{\le t}^{\top}}{\sqrt{d}}\Big)")
    st.latex(r"o_t = a_t\,V_{\le t}")
    if latest is not None:
        t = latest[0] + 1
        st.markdown(f"Here $d={D}$, $K$ and $V$ are ${t}\\times{D}$ per head, so $a_t$ has exactly **{t}** "
                    f"weights that add up to 1: one number per cached token. The weights never look "
                    f"ahead: the future is not in the cache yet.")
with left:
    if latest is None:
        st.info("Nothing has been through the model yet.")
    else:
        qpos, row = latest
        what = "the last prompt token (before the first decode step)" if not n_steps else \
            f"the token of decode step {n_steps}"
        st.markdown(f"Query: position **{qpos}** {code(labels[qpos])}, {what}. Layer {layer}, {head_name}.")
        if row is None:
            st.warning("This row was not captured: the step was taken on a page that does not record "
                       "attention. Steps taken here are recorded.")
            backfill_offer("latest")
        else:
            weights = av.select_heads(row, layer, head)
            st.markdown(av.attention_strip_html(labels[: qpos + 1], weights, qpos, P), unsafe_allow_html=True)
            st.plotly_chart(fig_att.attention_bar_figure(
                labels, weights, P, f"Layer {layer}, {head_name}: query {qpos} over {qpos + 1} cached keys"),
                key="att_bar", width="stretch")
            if st.toggle("Show all heads of this layer", key="att_all_heads"):
                st.plotly_chart(fig_att.heads_grid_figure(
                    labels, row[layer].numpy(), gqa.kv_of_query,
                    f"Layer {layer}: all {H} heads for query {qpos} (colour = shared K/V head)"),
                    key="att_heads", width="stretch")

# ---------------------------------------------------------------- 2. the triangle
st.header("2 · The triangle, one row per step")
if N == 0:
    st.info("Nothing has been through the model yet.")
else:
    n_missing = sources.count(av.MISSING)
    st.markdown(f"Row $q$ is where the token at position $q$ looked; columns are the cached keys. The "
                f"**{P} prefill rows** (grey strip) came from one pass over the prompt; each **decode step** "
                f"(blue strip) added one row, one key longer. Above the diagonal is the future: masked, "
                f"weight 0. Now: {N} rows, {n_steps} decode steps.")
    if n_missing:
        st.warning(f"{n_missing} of {N} rows were not captured (steps taken with attention capture off). "
                   "They are left grey, not guessed.")
        backfill_offer("triangle")
    first = max(0, N - MAX_TRIANGLE)
    if first:
        st.caption(f"The sequence has {N} positions; the chart shows the last {MAX_TRIANGLE} queries and keys "
                   f"(positions {first}–{N - 1}) so the page stays light.")
    st.plotly_chart(fig_att.triangle_figure(
        z[first:, first:], labels[first:N], sources[first:], P,
        f"Layer {layer}, {head_name}: {N - first} queries × {N - first} keys", first=first),
        key="att_triangle", width="stretch")

# ---------------------------------------------------------------- 3. GQA
st.header("3 · Grouped-query attention")
c1, c2 = st.columns([3, 2])
with c1:
    st.plotly_chart(fig_att.gqa_figure(gqa.kv_of_query, KV, head), key="att_gqa", width="stretch")
with c2:
    bpe = kvc.dtype_bytes(bundle.dtype)
    now = max(N, 1)
    with_gqa = kvc.kv_cache_bytes(L, KV, D, now, bpe)
    without = kvc.kv_cache_bytes(L, H, D, now, bpe)
    st.markdown(
        f"{bundle.name} has **{H} query heads** but caches only **{KV} K/V heads**: each group of "
        f"{gqa.group} query heads reads the same cached keys and values. Queries are never cached, "
        f"so only K and V count. At {now} positions the cache holds {kvc.human_bytes(with_gqa)}; "
        f"with one K/V per query head it would be {kvc.human_bytes(without)}, "
        f"**{gqa.saving:g}× more**.")
    for kv in range(KV):
        st.caption(f"K/V head {kv} ← query heads {', '.join(map(str, gqa.queries_of(kv)))}")

# ---------------------------------------------------------------- 4. the cache
st.header("4 · The KV cache")
bpe = kvc.dtype_bytes(bundle.dtype)
formula = kvc.kv_cache_bytes(L, KV, D, positions, bpe)
st.latex(r"\text{bytes} = 2 \times \text{layers} \times \text{kv\_heads} \times \text{head\_dim} "
         r"\times \text{positions} \times \text{bytes per element}")
st.latex(rf"= 2 \times {L} \times {KV} \times {D} \times {positions} \times {bpe} = {formula:,}".replace(",", "{,}"))
c1, c2 = st.columns([2, 3])
with c1:
    st.metric("Measured from the tensors", kvc.human_bytes(measured), help=f"{measured:,} bytes")
    st.metric("Formula", kvc.human_bytes(formula), help=f"{formula:,} bytes")
    if measured == formula:
        st.success(f"Equal, byte for byte: {measured:,} B. Each new token adds "
                   f"{kvc.bytes_per_position(L, KV, D, bpe):,.0f} B.")
    else:
        st.error(f"Measured {measured:,} B differs from the formula {formula:,} B.")
    if shapes:
        s0 = shapes[0]
        st.markdown(f"Per layer: K `{list(s0.keys)}` and V `{list(s0.values)}` "
                    f"= [batch, kv_heads, positions, head_dim], {s0.dtype}.")
with c2:
    st.plotly_chart(fig_cache.cache_growth_figure(timeline,
                                                  kvc.bytes_per_position(L, KV, D, bpe)),
                    key="att_cache_growth", width="stretch")
with st.expander(f"K and V shapes in all {len(shapes)} layers at this step"):
    st.dataframe(pd.DataFrame([{"layer": s.layer, "K shape": str(list(s.keys)), "V shape": str(list(s.values)),
                                "dtype": s.dtype, "bytes (K+V)": s.nbytes} for s in shapes]),
                 hide_index=True, key="att_shapes")

# ---------------------------------------------------------------- 5. memory calculator
SEQ_OPTIONS = [2 ** i for i in range(4, 21)]  # 16 … 1M tokens
PREC = list(kvc.PRECISIONS)
presets = {CUSTOM_LOADED: kvc.shape_of_bundle(bundle), **kvc.PRESETS}


def _load_preset() -> None:
    """Choosing a preset moves the sliders to its sequence length, batch and precision."""
    shape = presets.get(st.session_state.get("att_preset"), presets[CUSTOM_LOADED])
    st.session_state["att_seq"] = min(SEQ_OPTIONS, key=lambda s: abs(s - shape.seq_len))
    st.session_state["att_batch"] = shape.batch
    st.session_state["att_precision"] = kvc.precision_name(shape.bytes_per_element)


@st.fragment
def memory_calculator() -> None:
    """A fragment: moving its sliders reruns only this section, not the attention above."""
    st.header("5 · Memory calculator")
    if st.session_state.get("att_preset") not in presets:
        st.session_state["att_preset"] = CUSTOM_LOADED
    if st.session_state.get("att_seq") not in SEQ_OPTIONS or st.session_state.get("att_precision") not in PREC:
        _load_preset()
    c1, c2, c3, c4 = st.columns([3, 3, 2, 2])
    preset_name = c1.selectbox("Model", list(presets), key="att_preset", on_change=_load_preset,
                               format_func=lambda n: f"{n} ({bundle.name})" if n == CUSTOM_LOADED else n)
    seq_len = c2.select_slider("Sequence length (tokens)", SEQ_OPTIONS, key="att_seq",
                               format_func=lambda s: f"{s // 1024}K" if s >= 1024 else str(s))
    batch = c3.slider("Batch size", 1, 256, key="att_batch")
    precision = c4.selectbox("Precision", PREC, key="att_precision")
    shape = presets[preset_name]
    bpe_calc = kvc.PRECISIONS[precision]
    cache_b = shape.cache_bytes(seq_len, batch, bpe_calc)
    weight_b = shape.weight_bytes(bpe_calc)
    st.caption(f"{shape.name}: {shape.n_layers} layers, {shape.n_heads} query heads, {shape.n_kv_heads} K/V "
               f"heads of {shape.head_dim}, {shape.n_params / 1e6:,.0f} M parameters. {shape.note}.")
    st.latex(rf"2 \times {shape.n_layers} \times {batch} \times {shape.n_kv_heads} \times {shape.head_dim} "
             rf"\times {seq_len:,} \times {bpe_calc:g} = {cache_b:,}\ \text{{bytes}}".replace(",", "{,}"))
    c1, c2 = st.columns([2, 3])
    with c1:
        st.metric("KV cache", kvc.human_bytes(cache_b), help=f"{cache_b:,} bytes")
        st.metric("Weights", kvc.human_bytes(weight_b), help=f"{shape.n_params:,} parameters × {bpe_calc:g} B")
        ratio = cache_b / weight_b if weight_b else float("nan")
        st.markdown(f"The cache is **{ratio:.2f}×** the weights. It grows with every token and every sequence "
                    f"in the batch; the weights do not.")
        if shape.n_kv_heads < shape.n_heads:
            st.caption(f"Without GQA ({shape.n_heads} K/V heads) it would be "
                       f"{kvc.human_bytes(shape.cache_bytes_without_gqa(seq_len, batch, bpe_calc))}.")
    with c2:
        st.plotly_chart(fig_cache.memory_figure(shape, seq_len, batch, bpe_calc), key="att_memory", width="stretch")


memory_calculator()

# ---------------------------------------------------------------- 6. prefill vs decode
st.header("6 · Prefill vs decode, measured")
if times is None:
    st.info("Take a decode step (Next token) to compare its time with the prefill.")
else:
    c1, c2 = st.columns([3, 2])
    with c1:
        st.plotly_chart(fig_cache.phase_times_figure(times.prefill_ms_per_token, times.decode_ms_median,
                                                     times.prefill_tokens), key="att_phase", width="stretch")
    with c2:
        st.markdown(
            f"Prefill: {times.prefill_ms:.1f} ms for {times.prefill_tokens} prompt tokens = "
            f"**{times.prefill_ms_per_token:.2f} ms per token**. Decode step: **{times.decode_ms_median:.2f} ms** "
            f"(median of {times.decode_steps} forward passes), {times.ratio:.1f}× the prefill cost per token.")
        st.markdown("Prefill pushes many tokens through each weight matrix at once, so it is limited by "
                    "arithmetic (compute-bound); a decode step reads every weight and the whole cache to "
                    "produce one token, so it is limited by how fast memory can be read (memory-bandwidth-bound).")
        if times.prefill_tokens < 8:
            st.caption("With a very short prompt the prefill has little to share per token; try a longer prompt.")
