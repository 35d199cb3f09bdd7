"""Inside generation: training vs generation, the logit lens, prefill vs decode in seconds, a full cache."""
import streamlit as st

from autoreg_core import lens, phases, teacher, window
from autoreg_ui import controls, inside, keys, messages
from autoreg_ui.figures import inside as figs
from autoreg_ui.charts import show_chart
from autoreg_ui.format import BYTE_UNITS_NOTE, ratio
from autoreg_ui.presenter import explain
from autoreg_ui.state import current_bundle, session_or_start

state = st.session_state
st.title("Inside generation")
explain("Four things one decode step does not show: why training is fast and generation is not, what the "
        "layers guess before the last one, what prefill and decode cost in seconds, and what a server does "
        "when the KV cache no longer fits. Everything below is computed on the loaded model, in this tab.")
bundle = current_bundle()
session = session_or_start() if bundle is not None else None
if session is None:
    st.stop()
inside.sweep_settle(state)
tok = bundle.tokenizer


def metrics(rows: list[tuple[str, str, str]]) -> None:
    for col, (label, value, why) in zip(st.columns(len(rows)), rows):
        col.metric(label, value, help=why)


def side_by_side(captions: tuple[str, str], first: list[int], second: list[int]) -> None:
    for col, caption, text in zip(st.columns(2), captions, inside.side_by_side(tok, first, second)):
        col.caption(caption)
        col.text(text)


st.header("1 · Training reads the whole text at once; generation cannot")
explain(
    "Once a text exists, the model can score all of it in **one** forward pass: the causal mask lets position "
    "t see only positions ≤ t, so every position predicts its next token from the *true* text before it. "
    "That is **teacher forcing**, and it is why training is parallel. Generating needs the token at t before "
    "position t + 1 can be read, so the same numbers take one pass per token. Generate a few tokens, then "
    "read the text in one pass: the log-probabilities must agree.")
pressed = controls.step_buttons(keys.INSIDE_PAGE)
if pressed:
    controls.generate(pressed)
rank_col, force_col = st.columns([1, 2], vertical_alignment="bottom")
rank = rank_col.number_input("Rank to force", 2, 1000, 20, key=keys.INSIDE_FORCE_RANK)
force_col.button(f"Force the model's rank-{rank} token as the next one", key=keys.INSIDE_FORCE,
                 on_click=inside.force_rank)
messages.show()
st.text(session.text)
text_on = inside.stamp(bundle, tuple(session.ids))
if st.button("Read this text in one pass (teacher forcing)", key=keys.INSIDE_TEACHER.run,
             disabled=not session.records):
    with st.spinner("One forward pass over the whole text…"):
        inside.keep(state, keys.INSIDE_TEACHER.kept, text_on, inside.read_in_one_pass(bundle, session))
kept = inside.kept(state, keys.INSIDE_TEACHER.kept, text_on)
if kept is not None:
    scored, branch = kept
    records = session.records[:len(scored.logprobs)]
    metrics(inside.teacher_numbers(session, scored))
    if len(scored.ids) < len(session.ids):
        st.caption(f"One pass reads at most {teacher.MAX_TOKENS} tokens here; later steps are not scored.")
    show_chart(figs.teacher_figure([r.index for r in records], [r.logprob for r in records],
                                   scored.logprobs, [r.forced for r in records]), key=keys.INSIDE_TEACHER_FIG,
               filename="teacher-forcing-vs-steps")
    if branch is None:
        st.info("Force an unlikely token above (then generate a few more) to see exposure bias.")
    else:
        st.markdown(
            f"**Exposure bias.** Step {branch.step} was forced. In training every prefix is real text; here the "
            "later steps read a prefix that contains a token the model would not have written, and they "
            "condition on it all the same. The one-pass view agrees with the steps (the table): the model cannot "
            "tell its own tokens from forced ones. ▌ marks where the two texts below part.")
        side_by_side(("The text from the forced token on", "What the model writes itself there (greedy)"),
                     branch.actual, branch.own)
    st.dataframe(inside.teacher_rows(tok, records, scored), hide_index=True, key=keys.INSIDE_TEACHER_ROWS)

st.header("2 · The logit lens: a guess after every layer")
explain(
    "The last layer's hidden state goes through the final norm and the LM head to become logits. Send the "
    "hidden state after *any* layer through the same two modules and you read what the model would say if it "
    "stopped there. Early layers mostly echo the input token; the answer usually appears late. (transformers "
    "already norms the last entry of `hidden_states`; it goes through the LM head alone, so the last row equals "
    "the model's own logits.)")
n_steps = len(session.records)
inside.clamp(state, keys.INSIDE_LENS_STEP, 1, n_steps + 1, max(1, n_steps))
step = st.number_input(f"Step to read ({n_steps + 1} = the next token, not chosen yet)", 1, n_steps + 1,
                       key=keys.INSIDE_LENS_STEP)
context, target = inside.lens_target(session, int(step))
lens_on = inside.stamp(bundle, tuple(context), target)
if st.button("Read every layer", key=keys.INSIDE_LENS.run):
    try:
        inside.keep(state, keys.INSIDE_LENS.kept, lens_on, lens.logit_lens(bundle, context, target))
    except ValueError as exc:
        st.warning(str(exc))
reading = inside.kept(state, keys.INSIDE_LENS.kept, lens_on)
if reading is not None:
    st.write(inside.lens_summary(tok, reading))
    show_chart(figs.lens_target_figure(tok, reading), key=keys.INSIDE_LENS_TARGET_FIG, filename="logit-lens-target")
    show_chart(figs.lens_figure(tok, reading), key=keys.INSIDE_LENS_GRID_FIG, filename="logit-lens-grid")

st.header("3 · Prefill vs decode, in the units people quote")
explain(
    "A server is judged by **time to first token** (TTFT: the prefill over the whole prompt, then one choice) "
    "and **tokens per second** after it (one decode pass per token). The prefill pushes many positions through "
    "each weight matrix at once, so it is limited by arithmetic; a decode step reads every weight, and the "
    "whole cache, to produce one token, so it is limited by memory traffic. Per token, the prefill is far "
    "cheaper — but only a prompt of hundreds of tokens shows how much.")
choice = st.radio("Prompt for sections 3 and 4", inside.PROMPT_CHOICES, horizontal=True,
                  key=keys.INSIDE_PROMPT_CHOICE)
n_new = int(st.number_input("New tokens", 2, inside.MAX_NEW, 32, key=keys.INSIDE_PHASE_NEW))
prompt_ids = inside.measurement_prompt(bundle, session, choice, room=inside.MAX_NEW)
st.caption(inside.prompt_caption(prompt_ids, choice))
phases_on = inside.stamp(bundle, tuple(prompt_ids), n_new)
if st.button("Measure time to first token and tokens per second", key=keys.INSIDE_PHASES.run):
    with st.spinner(f"Prefill of {len(prompt_ids)} tokens, then {n_new - 1} decode steps…"):
        inside.keep(state, keys.INSIDE_PHASES.kept, phases_on, phases.greedy_run(bundle, prompt_ids, n_new))
run = inside.kept(state, keys.INSIDE_PHASES.kept, phases_on)
if run is not None:
    metrics(inside.phase_numbers(run))

lengths = phases.sweep_lengths(len(prompt_ids), bundle.spec.max_positions)
sweep_on = inside.stamp(bundle, tuple(prompt_ids[:lengths[-1]]))
go_col, stop_col = st.columns([3, 1])
start = go_col.button(f"Sweep the prefill over L = {', '.join(map(str, lengths))}", key=keys.INSIDE_SWEEP.run)
stop_col.button("Stop", key=keys.INSIDE_SWEEP.stop, disabled=not start, help="What was measured is kept.")
st.caption("At each L: a prefill of the first L prompt tokens, and one decode step on the cache it leaves "
           "(the fastest of two runs each: other work on the machine only ever adds time).")
if start:
    bar = st.progress(0.0, text="Warm-up…")  # each update of the bar is where a Stop click lands
    inside.run_sweep(state, bundle, prompt_ids, sweep_on, lengths, lambda done, text: bar.progress(done, text=text))
    bar.empty()
sweep = inside.sweep_of(state, sweep_on)
if sweep is not None and sweep.points:
    if sweep.stopped:
        st.warning(f"Stopped: {len(sweep.points)} of {len(sweep.lengths)} lengths measured.")
    best = sweep.points[-1]
    st.write(f"At L = {best.length}, one decode step costs as much as **{ratio(best.decode_over_prefill)}** "
             f"prompt tokens inside the prefill ({best.decode_ms:.1f} ms vs {best.prefill_ms_per_token:.2f} ms).")
    show_chart(figs.sweep_figure(sweep.points), key=keys.INSIDE_SWEEP_FIG, filename="prefill-sweep")

st.subheader(f"The worked example: a {inside.WORKED_PROMPT}-token prompt and {inside.WORKED_NEW} new tokens")
counts = phases.worked_counts(bundle.spec, inside.WORKED_PROMPT, inside.WORKED_NEW)
st.dataframe(inside.worked_rows(counts), hide_index=True, key=keys.INSIDE_WORKED_COUNTS)
st.caption("Naive: each new token re-reads everything (50 + 51 + … + 149 positions). Cached: the prompt once, "
           "then one position per step; the 100th token is chosen but never fed back.")
worked_on = inside.stamp(bundle, inside.WORKED_PROMPT, inside.WORKED_NEW)
if st.button("Time it on this model", key=keys.INSIDE_EXAMPLE.run):
    with st.spinner("50-token prefill, then 99 decode steps…"):
        worked = phases.greedy_run(bundle, inside.worked_prompt(bundle), inside.WORKED_NEW, stop_at_eos=False)
        inside.keep(state, keys.INSIDE_EXAMPLE.kept, worked_on, worked)
worked = inside.kept(state, keys.INSIDE_EXAMPLE.kept, worked_on)
if worked is not None:
    metrics(inside.phase_numbers(worked))

st.header("4 · When the cache runs out")
explain(
    "The cache grows by one position per token per request; on a busy server it, not the weights, fills the "
    "memory first. A server then can **queue** new requests, **preempt** one (drop its cache and recompute it "
    "later, or swap it to CPU memory), or **bound** each request's cache by **evicting** old positions: a "
    "**sliding window** keeps only the last W. (**Paging**, as in vLLM's PagedAttention, stores the cache in "
    "fixed-size blocks so no memory is lost to gaps between requests; it packs more caches in, it does not "
    "shrink one.) Below, the same greedy generation twice: with the full cache, and with transformers' "
    "`DynamicSlidingWindowLayer` keeping W − 1 positions, so each new token sees itself and the last W − 1. "
    "The prompt itself is still read with full attention in the prefill; the window bites from the first "
    "decode step on.")
max_window = min(512, bundle.spec.max_positions)
inside.clamp(state, keys.INSIDE_WINDOW_SIZE, 2, max_window, min(64, max_window))
width = int(st.slider("Window W (positions each new token sees)", 2, max_window, key=keys.INSIDE_WINDOW_SIZE))
window_on = inside.stamp(bundle, tuple(prompt_ids), n_new, width)
if st.button(f"Generate {n_new} tokens with both caches", key=keys.INSIDE_WINDOW.run):
    with st.spinner("Full cache, then sliding window…"):
        inside.keep(state, keys.INSIDE_WINDOW.kept, window_on, window.compare_window(bundle, prompt_ids, n_new, width))
compared = inside.kept(state, keys.INSIDE_WINDOW.kept, window_on)
if compared is not None:
    metrics(inside.window_numbers(compared))
    side_by_side(("Full cache (▌ marks where the texts part)", f"Sliding window, W = {width}"),
                 compared.full.generated_ids, compared.windowed.generated_ids)
    show_chart(figs.window_bytes_figure(compared.full.cache_bytes, compared.windowed.cache_bytes, width),
               key=keys.INSIDE_WINDOW_FIG, filename=f"sliding-window-W{width}")
    st.caption(BYTE_UNITS_NOTE)
