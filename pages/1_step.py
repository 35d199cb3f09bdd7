"""Step through generation: one decode step per click, with everything the step decided."""
import streamlit as st

from autoreg_core.generate_call import generate_snippet
from autoreg_core.spec import dtype_name
from autoreg_ui import controls, export, keys, messages
from autoreg_ui.charts import show_chart
from autoreg_ui.figures.step import (history_frame, logprob_figure, token_strip_html, top_of_pipeline,
                                     top_of_record, topn_figure)
from autoreg_ui.presenter import explain
from autoreg_ui.prompt import prompt_box
from autoreg_ui.state import current_bundle, current_config

st.title("Step through generation")
explain(
    "A language model writes by repeating one small loop: read everything so far, turn the last "
    "position's hidden state into **logits** (one score per vocabulary token), make them "
    "probabilities with a softmax, pick one token, append it, go again. The first pass over the "
    "prompt is the **prefill**; every later pass feeds only the newest token and reuses the keys and "
    "values stored in the **KV cache** — one **decode step**."
)
st.latex(r"P(x_1,\dots,x_T \mid \text{prompt}) = \prod_{t=1}^{T} P(x_t \mid \text{prompt}, x_{<t})")

bundle = current_bundle()
if bundle is None:
    st.stop()
session = prompt_box()
messages.show()
if session is None:
    st.info("Fix the prompt above, then press **Start from this prompt**.")
    st.stop()


@st.fragment
def stepper() -> None:
    n = controls.step_buttons("step")
    notes, strip = st.container(), st.empty()  # Generate N streams its tokens into the strip as they come

    def draw_strip(_record=None) -> None:
        strip.markdown(token_strip_html(session.views(), session.records, session.prompt_len),
                       unsafe_allow_html=True)
    if n:
        controls.generate(n, on_step=draw_strip)
    with notes:
        messages.show()
    records = session.records
    draw_strip()
    st.caption(f"{session.prompt_len} prompt tokens (grey, dashed) · {len(records)} generated, coloured by the "
               "probability the model's own softmax gave them when chosen (red unlikely → green confident). "
               "Hover a token for its id, that probability, its probability after the filters, rank and log-prob.")
    if records and records[-1].stop is not None:
        st.success(f"Generation stopped: {records[-1].stop[1]}.")

    last = records[-1] if records else None
    m = st.columns(5)
    m[0].metric("Generated tokens", len(records))
    m[1].metric("Sequence log-prob", f"{session.sequence_logprob():.2f}" if last else "—",
                help="Σ log p(token | everything before it): the chain rule, in nats, under the model's raw softmax.")
    m[2].metric("Perplexity", f"{session.perplexity():.2f}" if last else "—",
                help="exp(−mean log-prob) under the model's raw softmax (not the filtered one): the model was "
                     "as unsure as a fair choice among this many tokens.")
    m[3].metric("Entropy of this step", f"{last.entropy_bits:.2f} bits" if last else "—",
                help="How spread out the model's raw softmax was at the last step (before the filters).")
    m[4].metric("Last step", f"{last.time_ms:.0f} ms" if last else "—",
                help="Choosing the token plus one forward pass of one token on the KV cache.")

    top_n = st.slider("Bars to show (top-N)", 3, 50, 15, key=keys.TOP_N)
    if last is not None:
        how = "forced" if last.forced else ("greedy" if last.config.greedy else "sampled")
        title = (f"Step {last.index}: {how} “{session.views()[-1].label}” (p = {last.prob:.3f} in the model's "
                 f"softmax, {last.prob_filtered:.3f} after the filters, rank {last.rank}, {last.kept} tokens kept)")
        show_chart(topn_figure(bundle.tokenizer, top_of_record(last, top_n), title),
                   key="last_chart", filename=f"step-{last.index}-top-tokens")
    else:
        st.info("Press **Next token** (or the N key) to run the first decode step.")

    st.subheader("What could come next — click a bar to force that token")
    pipeline = session.next_pipeline(current_config())
    event = show_chart(topn_figure(bundle.tokenizer, top_of_pipeline(pipeline, top_n),
                                   "Candidates for the next token (nothing drawn yet)"),
                       key=f"next_chart_{len(records)}", filename=f"step-{len(records) + 1}-candidates",
                       on_select="rerun", selection_mode="points")
    picked = [p.get("customdata") for p in (event.selection.points if event and event.selection else []) or []]
    picked = [i for i in picked if isinstance(i, int) and i >= 0]
    if picked:
        controls.force(picked[0])
        st.rerun(scope="fragment")
    f1, f2 = st.columns([3, 1], vertical_alignment="bottom")
    f1.text_input("…or type one token to force (mind the leading space, e.g. ' mat')", key=keys.FORCE_TEXT)
    f2.button("Force this token", key=keys.FORCE_BUTTON,
              on_click=lambda: controls.force(st.session_state.get(keys.FORCE_TEXT, "")))

    if records:
        st.subheader("The chain rule, running")
        show_chart(logprob_figure(records), key="logprob_chart", filename="step-chain-rule")
        st.subheader("History")
        frame = history_frame(bundle.tokenizer, records)
        st.dataframe(frame, hide_index=True, key=keys.HISTORY)
        st.download_button("Download CSV (with the prompt and settings of every step)",
                           lambda: export.history_csv(session), file_name="autoreg_steps.csv", mime="text/csv",
                           key=keys.HISTORY_CSV, on_click="ignore")


stepper()

with st.expander("The same generation in one `model.generate` call"):
    st.markdown("Every sidebar setting maps onto an argument of transformers' `generate`. With the same "
                "seed, this code produces exactly the tokens you get here by clicking **Next token** "
                "(a test checks it). `use_cache=True` is the KV cache; `pad_token_id` only matters when "
                "several prompts of different lengths run as one batch.")
    st.code(generate_snippet(current_config(), bundle, session.prompt, session.chat), language="python")

with st.expander("Around the loop: ideas these steps make visible"):
    st.markdown(f"""
- **No going back.** Each token is final once appended; the model never revises earlier text. Force
  a token and watch later steps condition on that choice: this is **exposure bias**. In training the
  model always read correct text (**teacher forcing**); when generating it reads its own choices.
- **No look-ahead.** The model does not plan the whole answer; each bar chart above is all it
  "knows" about what comes next.
- **A sequential bottleneck.** Step *t + 1* needs the token chosen at step *t*, so the steps of one
  sequence cannot run in parallel: {len(session.records)} tokens took {len(session.records)} forward
  passes. Extra GPUs help serve more users (batching), not one user's latency.
- **Streaming.** Because tokens arrive one by one, apps show them as they come (as the strip above does).
- **Stopping.** Generation ends at the **EOS** token, at **max new tokens**, or when a **stop sequence**
  appears (set them in the sidebar); in chat mode the model's EOS is its end-of-turn marker.
- **Making it faster.** *Quantization* stores weights in fewer bits (this very model ships as a 4-bit
  GGUF file, dequantized to {dtype_name(bundle.dtype)} when loaded); *mixed precision* runs in 16-bit
  floats; *speculative decoding* lets a cheap draft propose several tokens that the model checks in
  one pass; *continuous batching* lets a server add and remove requests from a running batch every
  step. The KV cache itself is the first and biggest saving — see **Naive vs KV cache**.
- **Other ways to write.** Non-autoregressive and diffusion-style models predict many positions at
  once and refine them; they are faster per token but harder to keep coherent.
""")
