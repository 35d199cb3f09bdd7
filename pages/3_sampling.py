"""Sampling lab: what temperature, top-k, top-p, min-p and beam search do to one set of logits.

The logits come from the session (the next token it would pick) or from a prompt typed here
(one prefill, cached). Sliders only re-run the sampling arithmetic on those cached logits; the
model runs again only when a button asks for continuations or a beam search.
"""
import time

import streamlit as st
import torch

from autoreg_core import SamplingConfig, Session, SessionError
from autoreg_core import stages as sg
from autoreg_core.beam import MAX_BEAM_STEPS, beam_search
from autoreg_core.continuations import MAX_CONTINUATIONS, sample_continuations
from autoreg_ui.figures.beam import beam_tree_figure, beams_frame
from autoreg_ui.figures.sampling import (draw_figure, draws_figure, pipeline_figure, strategies_figure,
                                           sweep_figure)
from autoreg_core.tokens import sequence_text, single_token_view
from autoreg_ui.state import DEFAULT_PROMPT, PROMPT_KEY, current_bundle, current_config, current_session

MAX_N_INPUT = 1_000_000
BEAM_WIDTHS = (1, 5)
BEAM_STEPS = (1, 12)

st.title("Sampling lab")
st.markdown(
    "The model only gives **logits**, one score per token of the vocabulary. How the next token is "
    "*chosen* from them is a separate, cheap piece of arithmetic: **temperature**, **top-k**, "
    "**top-p (nucleus)** and **min-p** reshape the distribution, then one token is drawn. Everything "
    "here works on one cached set of logits, so moving a slider never runs the model."
)

bundle = current_bundle()
if bundle is None:
    st.stop()
tok = bundle.tokenizer
sidebar_cfg = current_config()


# ---------------------------------------------------------------- widget state that survives page switches
def keep(key: str, default):
    """Streamlit drops the state of widgets a page did not draw; restore it from a durable copy."""
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(f"{key}__kept", default)


def remember(*keys: str) -> None:
    for key in keys:
        if key in st.session_state:
            st.session_state[f"{key}__kept"] = st.session_state[key]


def label(token_id: int) -> str:
    return single_token_view(tok, int(token_id)).label


def copy_sidebar() -> None:
    cfg = current_config()
    st.session_state["lab_temperature"] = float(cfg.temperature)
    st.session_state["lab_top_k"] = int(cfg.top_k)
    st.session_state["lab_top_p"] = float(cfg.top_p)
    st.session_state["lab_min_p"] = float(cfg.min_p)
    st.session_state["lab_seed"] = int(cfg.seed)


# ---------------------------------------------------------------- where the logits come from
session = current_session()
options = ["the session's next token", "a prompt typed here"] if session is not None else ["a prompt typed here"]
keep("lab_source", options[0])
if st.session_state["lab_source"] not in options:
    st.session_state["lab_source"] = options[0]
source = st.radio("Logits from", options, key="lab_source", horizontal=True,
                  help="The session is the one of the Step page. Its next-token logits are what the "
                       "model would pick from now.")
remember("lab_source")

if source == "a prompt typed here":
    if session is None:
        st.caption("No generation session yet (the Step page starts one). Type a prompt to get logits.")
    keep("lab_prompt", st.session_state.get(PROMPT_KEY, DEFAULT_PROMPT))
    keep("lab_chat", False)
    c1, c2 = st.columns([4, 1])
    c1.text_input("Prompt", key="lab_prompt")
    c2.toggle("Chat mode", key="lab_chat")
    remember("lab_prompt", "lab_chat")
    cache_key = (bundle.name, st.session_state["lab_prompt"], bool(st.session_state["lab_chat"]))
    lab_sessions = st.session_state.setdefault("lab_sessions", {})
    ctx = lab_sessions.get(cache_key)
    if ctx is None:
        try:
            ctx = Session(bundle, st.session_state["lab_prompt"], chat=bool(st.session_state["lab_chat"]))
        except SessionError as exc:
            st.warning(str(exc))
            st.stop()
        with st.spinner("Prefill of the prompt (once)…"):
            ctx.prefill(capture_attention=False)
        for old in list(lab_sessions)[:-2]:  # keep the last three prompts
            lab_sessions.pop(old)
        lab_sessions[cache_key] = ctx
else:
    ctx = session
    if ctx.pending_logits is None:
        with st.spinner("Prefill of the prompt…"):
            ctx.prefill()

context_ids = list(ctx.ids)
logits = ctx.pending_logits
fingerprint = (source, id(ctx), len(context_ids), tuple(context_ids[-8:]))
tail_views = ctx.views()[-40:]
with st.expander(f"Context: {len(context_ids)} tokens (the logits are for the token after it)",
                 expanded=False):
    st.code("".join(v.text for v in tail_views), language=None, wrap_lines=True)
if source != "a prompt typed here" and ctx.records and ctx.records[-1].stop:
    st.info(f"The session has stopped ({ctx.records[-1].stop[1]}); these are still the model's logits "
            "for the position after it.")

# ---------------------------------------------------------------- 1–3. pipeline, draw, draw many, sweep
keep("lab_temperature", float(sidebar_cfg.temperature))
keep("lab_top_k", int(sidebar_cfg.top_k))
keep("lab_top_p", float(sidebar_cfg.top_p))
keep("lab_min_p", float(sidebar_cfg.min_p))
keep("lab_seed", int(sidebar_cfg.seed))
keep("lab_top_n", 15)
keep("lab_n", 1000)
st.session_state.setdefault("lab_draw_count", 0)


def lab_config() -> SamplingConfig:
    """The lab's own settings (section 1); the repetition penalty comes from the sidebar."""
    return SamplingConfig(temperature=float(st.session_state["lab_temperature"]),
                          top_k=int(st.session_state["lab_top_k"]), top_p=float(st.session_state["lab_top_p"]),
                          min_p=float(st.session_state["lab_min_p"]),
                          repetition_penalty=float(current_config().repetition_penalty),
                          seed=int(st.session_state["lab_seed"]))


def sweep_for_context() -> sg.Sweep:
    sweeps = st.session_state.setdefault("lab_sweeps", {})
    if fingerprint not in sweeps:
        sweep = sg.temperature_sweep(logits)
        sweeps.clear()
        sweeps[fingerprint] = sweep
    return sweeps[fingerprint]


@st.fragment
def pipeline_section() -> None:
    t_start = time.perf_counter()
    st.header("1 · The pipeline, stage by stage")
    c1, c2, c3, c4 = st.columns(4)
    c1.slider("Temperature (0 = greedy)", 0.0, 3.0, step=0.05, key="lab_temperature")
    c2.number_input("Top-k (0 = off)", min_value=0, max_value=10_000_000, step=1, key="lab_top_k")
    c3.slider("Top-p (1 = off)", 0.0, 1.0, step=0.01, key="lab_top_p")
    c4.slider("Min-p (0 = off)", 0.0, 1.0, step=0.01, key="lab_min_p")
    c1, c2, c3, c4 = st.columns(4)
    c1.slider("Tokens shown", 5, 40, step=1, key="lab_top_n")
    c2.number_input("Seed of the draw", min_value=0, max_value=2**31 - 1, step=1, key="lab_seed")
    c3.button("Draw again", key="lab_redraw",
              on_click=lambda: st.session_state.update(lab_draw_count=st.session_state["lab_draw_count"] + 1))
    c4.button("Copy the sidebar's settings", key="lab_from_sidebar", on_click=copy_sidebar)
    remember("lab_temperature", "lab_top_k", "lab_top_p", "lab_min_p", "lab_seed", "lab_top_n")

    cfg = lab_config()
    draw_seed = int(st.session_state["lab_seed"]) + int(st.session_state["lab_draw_count"])
    n_req = int(st.session_state["lab_n"])
    pipe = sg.run_pipeline(logits, cfg, context_ids)
    draw = sg.inverse_cdf_draw(pipe.probs, draw_seed)
    many = sg.draw_many(pipe.probs, n_req, draw_seed)
    gap = float((many.freqs - pipe.probs.double()).abs().max())
    entropy_after, entropy_raw = sg.entropy_bits(pipe.probs), sg.entropy_bits(pipe.stages[0].probs)
    order_scores = pipe.stages[1].scores if pipe.stages[1].name == sg.REPETITION else pipe.stages[0].scores
    show_ids = sg.top_token_ids(order_scores, int(st.session_state["lab_top_n"]))
    many_ids = torch.topk(pipe.probs, min(int(st.session_state["lab_top_n"]), pipe.kept)).indices.tolist()
    math_ms = (time.perf_counter() - t_start) * 1000.0

    for note in pipe.notes:
        st.info(note)
    if pipe.greedy and not pipe.fallback:
        st.info("Temperature 0 is greedy decoding: the most likely token is taken, no division by T "
                "happens and top-k, top-p and min-p change nothing.")
    if pipe.fallback:
        st.warning("Every token was filtered out, so the lab falls back to the single most likely token.")
    if cfg.repetition_penalty != 1.0:
        st.caption(f"The sidebar's repetition penalty ({cfg.repetition_penalty:g}) is applied first, as "
                   "generate does.")
    if draw.token_id not in show_ids:
        show_ids.append(draw.token_id)
    labels = [label(i) for i in show_ids]
    raw_probs = pipe.stages[0].probs
    shown_mass = float(raw_probs[torch.tensor(show_ids)].sum())
    top_id = show_ids[0]

    left, right = st.columns([5, 2])
    with left:
        st.plotly_chart(pipeline_figure(pipe, show_ids, labels, chosen=draw.token_id), key="lab_pipeline_chart")
        st.caption(f"{len(show_ids)} of {bundle.vocab_size:,} tokens shown; at temperature 1 they hold "
                   f"{shown_mass:.1%} of the probability. Grey bars: removed by this stage (hover names it); "
                   "✕ marks a token removed by an earlier stage.")
    with right:
        st.markdown("**Softmax with temperature**")
        st.latex(r"p_i = \frac{e^{z_i/T}}{\sum_j e^{z_j/T}}")
        if pipe.greedy:
            st.markdown("T = 0 is **greedy**: the division would blow up, so the argmax is taken directly "
                        f"(here {label(top_id)!r}, p = {float(raw_probs[top_id]):.3f} at T = 1).")
        else:
            temp_stage = pipe.stage(sg.TEMPERATURE)
            p_t = float(temp_stage.probs[top_id])
            st.markdown(f"Top token {label(top_id)!r}: p = {float(raw_probs[top_id]):.3f} at T = 1, "
                        f"**{p_t:.3f}** at T = {cfg.temperature:g}. T < 1 sharpens, T > 1 flattens.")
        st.markdown("**Top-k** keeps the k highest logits. **Nucleus (top-p)** keeps the smallest set of "
                    "top tokens whose mass reaches p:")
        st.latex(r"\textstyle\sum_{i \in V_p} p_i \ge p,\ |V_p| \text{ smallest}")
        stage_p = pipe.stage(sg.TOP_P)
        if stage_p is not None and stage_p.active:
            st.markdown(f"Here {stage_p.kept:,} tokens, holding {stage_p.threshold:.3f}.")
        st.markdown("**Min-p** drops every token with")
        st.latex(r"p_i < p_{\min} \cdot \max_j p_j")
        st.markdown(f"**After all stages:** {pipe.kept:,} token{'s' if pipe.kept != 1 else ''} left, entropy "
                    f"{entropy_after:.2f} bits (raw softmax: {entropy_raw:.2f}).")

    st.subheader("The draw")
    dl, dr = st.columns([5, 2])
    with dl:
        st.plotly_chart(draw_figure(draw, pipe.probs, {i: label(i) for i in draw.order[:60].tolist()}),
                        key="lab_draw_chart")
    with dr:
        lo = float(draw.cdf[draw.position - 1]) if draw.position > 0 else 0.0
        hi = float(draw.cdf[draw.position])
        st.markdown(f"u = **{draw.u:.4f}** (seed {draw_seed}) falls in [{lo:.4f}, {hi:.4f}), the interval of "
                    f"**{label(draw.token_id)!r}**, ranked {draw.position + 1} of {pipe.kept:,} kept.")
        st.markdown("Inverse CDF: line the kept tokens up, each owning an interval as wide as its "
                    "probability; draw u uniformly in [0, 1) and take the token whose interval holds it.")
        st.caption("The engine (like generate) draws with torch.multinomial, a different but equivalent "
                   "way to sample the same distribution, so for the same seed its token can differ.")

    st.header("2 · Draw many")
    c1, c2 = st.columns([1, 3])
    c1.number_input(f"N draws (at most {sg.MAX_DRAWS:,})", min_value=1, max_value=MAX_N_INPUT, step=100,
                    key="lab_n")
    remember("lab_n")
    if many.capped:
        c1.warning(f"{n_req:,} is above the cap; drawing {sg.MAX_DRAWS:,}.")
    c2.plotly_chart(draws_figure(many_ids, [label(i) for i in many_ids], pipe.probs, many), key="lab_draws_chart")
    c1.markdown(f"{many.n:,} draws from the filtered distribution above (torch.multinomial, seed {draw_seed}). "
                f"Largest gap |frequency − p| over all tokens: **{gap:.4f}**. The law of large numbers: "
                f"the gap shrinks like 1/√N (at most {0.5 / many.n ** 0.5:.4f} for one standard error). "
                "Whiskers: ±2 standard errors.")

    st.header("3 · Temperature sweep")
    sweep = sweep_for_context()
    sl, sr = st.columns([5, 2])
    sl.plotly_chart(sweep_figure(sweep, cfg.temperature), key="lab_sweep_chart")
    i1 = sweep.temperatures.index(1.0)
    sr.markdown(f"softmax(z / T) with no filters, T from 0.05 to 3. At T = 1: "
                f"{sweep.entropy_bits[i1]:.2f} bits, top token {sweep.top_prob[i1]:.3f}, {sweep.cover[i1]:,} "
                f"tokens for 90 %. At T = 0.05: {sweep.cover[0]:,}; at T = 3: {sweep.cover[-1]:,}.")
    sr.markdown("As T → 0 the top token takes all the mass (greedy); as T grows the distribution "
                "flattens towards uniform. The dashed line is the lab's temperature.")
    total_ms = (time.perf_counter() - t_start) * 1000.0
    st.caption(f"This section redrew in {total_ms:.0f} ms ({math_ms:.0f} ms of sampling math), measured; "
               "no forward pass.")


pipeline_section()


# ---------------------------------------------------------------- 4. strategies side by side
keep("lab_strat_top_k", 40)
keep("lab_strat_top_p", 0.9)
keep("lab_strat_min_p", 0.05)


def strategies_now() -> list:
    return sg.default_strategies(min_p=float(st.session_state["lab_strat_min_p"]),
                                 top_k=int(st.session_state["lab_strat_top_k"]),
                                 top_p=float(st.session_state["lab_strat_top_p"]))


@st.fragment
def strategies_section() -> None:
    st.header("4 · Strategies side by side")
    c1, c2, c3 = st.columns(3)
    c1.number_input("k of the top-k strategy", min_value=0, max_value=10_000_000, step=1, key="lab_strat_top_k")
    c2.slider("p of the top-p strategy", 0.0, 1.0, step=0.01, key="lab_strat_top_p")
    c3.slider("min-p of the min-p strategy", 0.0, 1.0, step=0.01, key="lab_strat_min_p")
    remember("lab_strat_top_k", "lab_strat_top_p", "lab_strat_min_p")
    rows = sg.compare_strategies(logits, strategies_now())
    strat_ids = sg.top_token_ids(logits, 12)
    st.plotly_chart(strategies_figure(rows, strat_ids, [label(i) for i in strat_ids]), key="lab_strategies_chart")
    st.dataframe([{"strategy": r.name, "kept tokens": r.kept, "entropy (bits)": round(r.entropy_bits, 3),
                   "top token probability": round(r.top_prob, 4), "notes": " ".join(r.pipeline.notes)}
                  for r in rows], hide_index=True, key="lab_strategies_table")
    uniform = float(torch.log2(torch.tensor(float(bundle.vocab_size))))
    st.caption("Same logits, temperature 1 unless named. Entropy H = −Σ p log₂ p in bits: 0 means certain, "
               f"a uniform choice over all {bundle.vocab_size:,} tokens would be {uniform:.1f}.")


strategies_section()


# ---------------------------------------------------------------- 5. continuations
@st.fragment
def continuations_section() -> None:
    st.header("5 · Continuations")
    st.markdown("K continuations of M tokens under two strategies, all K in one batch on one KV cache "
                "(one forward pass per step). Greedy is deterministic: its K continuations are identical "
                "and often loop; high temperature drifts away from the topic.")
    presets = dict(strategies_now())
    presets["the lab's settings (section 1)"] = lab_config()
    presets["the sidebar's settings"] = current_config()
    names = list(presets)
    keep("lab_cont_a", "greedy")
    keep("lab_cont_b", "temperature 1.5")
    for key in ("lab_cont_a", "lab_cont_b"):
        if st.session_state[key] not in names:
            st.session_state[key] = names[0]
    keep("lab_cont_k", 5)
    keep("lab_cont_m", 30)
    c1, c2, c3, c4 = st.columns(4)
    c1.selectbox("Strategy A", names, key="lab_cont_a")
    c2.selectbox("Strategy B", names, key="lab_cont_b")
    c3.slider("K continuations", 1, MAX_CONTINUATIONS, step=1, key="lab_cont_k")
    c4.slider("M tokens each", 1, 60, step=1, key="lab_cont_m")
    remember("lab_cont_a", "lab_cont_b", "lab_cont_k", "lab_cont_m")
    settings_now = (st.session_state["lab_cont_a"], st.session_state["lab_cont_b"],
                    int(st.session_state["lab_cont_k"]), int(st.session_state["lab_cont_m"]),
                    int(st.session_state["lab_seed"]))
    if len(context_ids) + settings_now[3] > bundle.max_positions:
        st.warning(f"The context is too long for {settings_now[3]} more tokens "
                   f"({bundle.max_positions} positions at most).")
    elif st.button("Generate continuations", key="lab_cont_run", type="primary"):
        bar = st.progress(0.0, text="Generating…")
        results = []
        total = 2 * settings_now[3]
        with st.spinner("Decoding both strategies…"):
            for j, name in enumerate(settings_now[:2]):
                results.append(sample_continuations(
                    bundle, context_ids, presets[name], k=settings_now[2], m=settings_now[3],
                    seed=settings_now[4], name=name, cache=ctx.cache, first_logits=logits,
                    on_step=lambda s, m, j=j: bar.progress(min(1.0, (j * m + s) / total),
                                                           text=f"strategy {'AB'[j]}: token {s} of {m}")))
        bar.empty()
        st.session_state["lab_cont_result"] = (fingerprint, settings_now, results)
    stored = st.session_state.get("lab_cont_result")
    if stored is None or stored[0] != fingerprint:
        st.caption("Press **Generate continuations**: it runs the model.")
        return
    _, settings, results = stored
    if settings != settings_now:
        st.caption("Shown: the last run; its settings differ from the ones above (press the button to redo).")
    for col, (tag, res) in zip(st.columns(2), zip("AB", results)):
        with col:
            st.subheader(f"{tag}: {res.name}")
            m1, m2 = st.columns(2)
            m1.metric("mean sum log-prob", f"{res.mean_logprob:.1f}")
            m2.metric("distinct-2", f"{res.distinct_2:.2f}")
            m3, m4 = st.columns(2)
            m3.metric("repetition rate", f"{res.mean_repetition:.2f}")
            m4.metric("different texts", f"{res.n_unique} / {len(res.items)}")
            st.dataframe([{"#": i + 1, "continuation": c.text, "sum log-prob": round(c.logprob, 2),
                           "perplexity": round(c.perplexity, 2), "repetition": round(c.repetition_rate, 2)}
                          for i, c in enumerate(res.items)], hide_index=True, key=f"lab_cont_table_{tag}")
            st.caption(f"{res.steps} decode steps, {res.forward_passes} forward passes, "
                       f"{res.time_ms / 1000:.1f} s, measured.")
    st.caption("Sum log-prob: Σ log p(token | everything before) under the model's own softmax. distinct-2: "
               "distinct token pairs ÷ all token pairs over the K texts. Repetition: share of 3-token runs "
               "already seen earlier in the same text.")


continuations_section()


# ---------------------------------------------------------------- 6. beam search
@st.fragment
def beam_section() -> None:
    st.header("6 · Beam search")
    keep("lab_beam_width", 3)
    keep("lab_beam_steps", 8)
    keep("lab_beam_lp", 1.0)
    st.markdown("Keep the B best partial sequences, extend each by every token, and keep the B best of "
                "all extensions by their score (α is the length penalty: α > 0 favours longer beams, 0 ranks "
                "by the plain sum). A beam that emits EOS is set aside as finished. Width 1 is (almost) greedy.")
    st.latex(r"\text{score}(y) = \frac{1}{|y|^{\alpha}}\sum_{t=1}^{|y|} \log p(y_t \mid x, y_{<t})")
    bl = st.container()
    with bl:
        c1, c2, c3 = st.columns(3)
        c1.slider("Beam width", BEAM_WIDTHS[0], BEAM_WIDTHS[1], step=1, key="lab_beam_width")
        c2.slider("Steps", BEAM_STEPS[0], min(BEAM_STEPS[1], MAX_BEAM_STEPS), step=1, key="lab_beam_steps")
        c3.slider("Length penalty α", 0.0, 2.0, step=0.1, key="lab_beam_lp")
        remember("lab_beam_width", "lab_beam_steps", "lab_beam_lp")
        settings_now = (int(st.session_state["lab_beam_width"]), int(st.session_state["lab_beam_steps"]),
                        float(st.session_state["lab_beam_lp"]))
        context_label = "…" + "".join(v.text for v in tail_views[-3:])
        tree_slot = st.empty()
        if len(context_ids) + settings_now[1] > bundle.max_positions:
            st.warning(f"The context is too long for {settings_now[1]} more tokens.")
        elif st.button("Run beam search", key="lab_beam_run", type="primary"):
            names: dict[int, str] = {}

            def labels_for(result) -> dict[int, str]:
                for t_id in [n.token_id for n in result.nodes[1:]] + list(result.greedy_ids):
                    if t_id not in names:
                        names[t_id] = label(t_id)
                return names

            def live(partial) -> None:
                tree_slot.plotly_chart(beam_tree_figure(partial, labels_for(partial), context_label),
                                       key=f"lab_beam_live_{partial.steps}")

            with st.spinner("Beam search on the model…"):
                res = beam_search(bundle, context_ids, num_beams=settings_now[0], max_new_tokens=settings_now[1],
                                  length_penalty=settings_now[2], cache=ctx.cache, first_logits=logits,
                                  on_step=live)
            st.session_state["lab_beam_result"] = (fingerprint, settings_now, res)
        stored = st.session_state.get("lab_beam_result")
        if stored is None or stored[0] != fingerprint:
            st.caption("Press **Run beam search**: it runs the model, one forward pass per step for all "
                       "beams, reordering the KV cache to follow the surviving beams.")
            return
        _, settings, res = stored
        names_all = {t_id: label(t_id) for t_id in [n.token_id for n in res.nodes[1:]] + list(res.greedy_ids)}
        tree_slot.plotly_chart(beam_tree_figure(res, names_all, context_label), key="lab_beam_chart")
        if settings != settings_now:
            st.caption("Shown: the last run; its settings differ from the sliders (press the button to redo).")
        st.dataframe(beams_frame(res, lambda ids: sequence_text(tok, ids)), hide_index=True, key="lab_beam_table")
        best, greedy_lp = res.best, sum(res.greedy_logprobs)
        early = " (stopped early: no running beam could beat the finished ones)" if res.stopped_early else ""
        st.markdown(
            f"Width {res.num_beams}, {res.steps} steps{early}: {len(res.nodes) - 1} candidates kept in the "
            f"tree, {res.forward_passes} forward passes; beam search {res.time_ms / 1000:.2f} s + greedy path "
            f"{res.greedy_time_ms / 1000:.2f} s, measured. Best beam: sum log-prob {best.cum_logprob:.3f} "
            f"over {best.length} tokens; greedy: {greedy_lp:.3f} over {len(res.greedy_ids)}.")
        if res.greedy_ids and len(res.greedy_ids) == best.length and greedy_lp > best.cum_logprob:
            st.info("Here the greedy path is *more* likely than every beam: beam search is a heuristic, and "
                    "greedy's prefix fell out of the top B at some step (look for its tokens among the grey "
                    "pruned nodes). Wider beams or another length penalty may recover it.")


beam_section()
