"""Step through generation: one decode step per click, with everything the step decided."""
import streamlit as st

from autoreg_core import SessionError
from autoreg_core.generate_call import generate_snippet
from autoreg_ui.figures.step import history_frame, logprob_figure, token_strip_html, topn_figure
from autoreg_ui.controls import NEXT_SHORTCUT, next_token, reset, show_step_message, undo
from autoreg_ui.state import (CHAT_KEY, DEFAULT_PROMPT, EXAMPLE_PROMPTS, PROMPT_KEY, current_bundle,
                              current_config, current_session, start_session)

st.title("Step through generation")
st.markdown(
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


# ---------------------------------------------------------------- the prompt
# Widget values live in keys of their own ("*_box") and are copied to durable keys, so the prompt
# survives a visit to another page (Streamlit forgets the state of widgets it did not draw).
def _keep_prompt() -> None:
    st.session_state[PROMPT_KEY] = st.session_state["prompt_box"]


def _keep_chat() -> None:
    st.session_state[CHAT_KEY] = st.session_state["chat_box"]


def _pick_example() -> None:
    st.session_state[PROMPT_KEY] = st.session_state["prompt_box"] = st.session_state["example_box"]


def _apply_prompt() -> None:
    start_session(st.session_state[PROMPT_KEY], st.session_state[CHAT_KEY])


st.session_state.setdefault(PROMPT_KEY, DEFAULT_PROMPT)
st.session_state.setdefault(CHAT_KEY, False)
st.session_state.setdefault("prompt_box", st.session_state[PROMPT_KEY])
st.session_state.setdefault("chat_box", st.session_state[CHAT_KEY])

with st.container(border=True):
    left, right = st.columns([3, 1])
    left.text_area("Prompt", key="prompt_box", on_change=_keep_prompt, height=80)
    right.selectbox("Examples", EXAMPLE_PROMPTS, key="example_box", on_change=_pick_example, index=None,
                    placeholder="Pick an example…")
    right.toggle("Chat mode", key="chat_box", on_change=_keep_chat,
                 help="Wrap the prompt in the model's chat template; its special tokens stay visible.")
    right.button("Start from this prompt", key="apply_prompt", on_click=_apply_prompt, type="secondary")

session = current_session()
if session is None:
    session = start_session(st.session_state[PROMPT_KEY], st.session_state[CHAT_KEY])
if session is None:
    st.info("Fix the prompt above, then press **Start from this prompt**.")
    st.stop()
if (session.prompt, session.chat) != (st.session_state[PROMPT_KEY], st.session_state[CHAT_KEY]):
    st.info("The prompt box differs from the prompt being generated from. Press **Start from this "
            f"prompt** to restart from it (this clears the {len(session.records)} generated tokens).")


# ---------------------------------------------------------------- the step, in a fragment
def _generate_n(n: int) -> None:
    start = len(session.records)
    bar = st.progress(0.0, text=f"Generating up to {n} tokens…")
    try:
        done = session.generate(n, current_config(),
                                on_step=lambda r: bar.progress(min(1.0, (r.index - start) / n),
                                                               text=f"step {r.index}"))
    except SessionError as exc:
        st.session_state["step_message"] = str(exc)
        done = []
    bar.empty()
    if done and done[-1].stop is None and len(done) < n:
        st.session_state["step_message"] = f"Stopped after {len(done)} tokens."


def _force_text() -> None:
    try:
        session.force(st.session_state.get("force_text", ""), current_config())
    except SessionError as exc:
        st.session_state["step_message"] = str(exc)


def _force_id(token_id: int) -> None:
    try:
        session.force(int(token_id), current_config())
    except SessionError as exc:
        st.session_state["step_message"] = str(exc)


@st.fragment
def stepper() -> None:
    config = current_config()
    c1, c2, c3, c4, c5 = st.columns([1.2, 1, 1.2, 0.8, 0.8], vertical_alignment="bottom")
    c1.button("Next token", key="next", type="primary", on_click=next_token, shortcut=NEXT_SHORTCUT,
              help="One decode step (keyboard: N).")
    n = c2.number_input("N", min_value=1, max_value=512, value=10, key="gen_n")
    gen = c3.button(f"Generate {n}", key="generate")
    c4.button("Undo", key="undo", on_click=undo, help="Drop the last token; the cache loses one row.")
    c5.button("Reset", key="reset", on_click=reset, help="Back to the prompt alone.")
    if gen:
        _generate_n(int(n))
    show_step_message()

    records = session.records
    st.markdown(token_strip_html(session.views(), records, session.prompt_len), unsafe_allow_html=True)
    st.caption(f"{session.prompt_len} prompt tokens (grey, dashed) · {len(records)} generated "
               "(coloured by the probability they had when chosen: red unlikely → green confident; "
               "hover a token for id, probability, rank and log-prob).")
    if records and records[-1].stop is not None:
        st.success(f"Generation stopped: {records[-1].stop[1]}.")

    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("Generated tokens", len(records))
    m2.metric("Sequence log-prob", f"{session.sequence_logprob():.2f}" if records else "—",
              help="Σ log p(token | everything before it): the chain rule, in nats.")
    m3.metric("Perplexity", f"{session.perplexity():.2f}" if records else "—",
              help="exp(−mean log-prob): the model was as unsure as a fair choice among this many tokens.")
    m4.metric("Entropy of this step", f"{records[-1].entropy_bits:.2f} bits" if records else "—",
              help="How spread out the model's softmax was at the last step.")
    m5.metric("Last step", f"{records[-1].time_ms:.0f} ms" if records else "—",
              help="Choosing the token plus one forward pass of one token on the KV cache.")

    top_n = st.slider("Bars to show (top-N)", 3, 50, 15, key="top_n")
    if records:
        last = records[-1]
        label = session.views()[-1].label
        how = "forced" if last.forced else ("greedy" if last.config.greedy else "sampled")
        st.plotly_chart(topn_figure(bundle.tokenizer, last.probs_before(), last.probs_after(), last.token_id,
                                    n=top_n, title=f"Step {last.index}: {how} “{label}” "
                                    f"(p = {last.prob:.3f}, rank {last.rank}, {last.kept} tokens kept)"),
                        key=f"last_chart_{last.index}")
    else:
        st.info("Press **Next token** (or the N key) to run the first decode step.")

    st.subheader("What could come next — click a bar to force that token")
    before, after = session.next_distribution(config)
    event = st.plotly_chart(topn_figure(bundle.tokenizer, before, after, None, n=top_n,
                                        title="Candidates for the next token (nothing drawn yet)"),
                            key=f"next_chart_{len(records)}", on_select="rerun", selection_mode="points")
    points = (event.selection.points if event and event.selection else []) or []
    picked = [p.get("customdata") for p in points if isinstance(p.get("customdata"), int) and p["customdata"] >= 0]
    if picked:
        _force_id(picked[0])
        st.rerun(scope="fragment")
    f1, f2 = st.columns([3, 1], vertical_alignment="bottom")
    f1.text_input("…or type one token to force (mind the leading space, e.g. ' mat')", key="force_text")
    f2.button("Force this token", key="force", on_click=_force_text)

    if records:
        st.subheader("The chain rule, running")
        st.plotly_chart(logprob_figure(records), key=f"logprob_{len(records)}")
        st.subheader("History")
        frame = history_frame(bundle.tokenizer, records)
        st.dataframe(frame, hide_index=True, key="history")
        st.download_button("Download CSV", frame.to_csv(index=False).encode("utf-8"),
                           file_name="autoreg_steps.csv", mime="text/csv", key="csv")


stepper()

with st.expander("The same generation in one `model.generate` call"):
    st.markdown("Every sidebar setting maps onto an argument of transformers' `generate`. With the same "
                "seed, this code produces exactly the tokens you get here by clicking **Next token** "
                "(a test checks it). `use_cache=True` is the KV cache; `pad_token_id` only matters when "
                "several prompts of different lengths run as one batch.")
    st.code(generate_snippet(current_config(), bundle, session.prompt, session.chat), language="python")

with st.expander("Around the loop: ideas these steps make visible"):
    st.markdown(f"""
- **No going back.** Each token is final once appended; the model never revises earlier text. Use
  *force a token* to push it somewhere odd and watch later steps condition on that choice — this is
  **exposure bias**: in training the model always saw correct text (**teacher forcing**), at generation
  time it reads its own mistakes.
- **No look-ahead.** The model does not plan the whole answer; each bar chart above is all it
  "knows" about what comes next.
- **A sequential bottleneck.** Step *t + 1* needs the token chosen at step *t*, so the steps of one
  sequence cannot run in parallel: {len(session.records)} tokens took {len(session.records)} forward
  passes. Extra GPUs help serve more users (batching), not one user's latency.
- **Streaming.** Because tokens arrive one by one, apps show them as they come (as the strip above does).
- **Stopping.** Generation ends at the **EOS** token, at **max new tokens**, or when a **stop sequence**
  appears (set them in the sidebar); in chat mode the model's EOS is its end-of-turn marker.
- **Making it faster.** *Quantization* stores weights in fewer bits (this very model ships as a 4-bit
  GGUF file, dequantized to {str(bundle.dtype).replace('torch.', '')} when loaded); *mixed precision*
  runs in 16-bit floats; *speculative decoding* lets a small draft model propose several tokens that
  the big model checks in one pass; *continuous batching* lets a server add and remove requests from a
  running batch every step. The KV cache itself is the first and biggest saving — see
  **Naive vs KV cache**.
- **Other ways to write.** Non-autoregressive and diffusion-style models predict many positions at
  once and refine them; they are faster per token but harder to keep coherent.
""")
