"""The sidebar every page shares: model line and sampling settings."""
from __future__ import annotations

import streamlit as st

from autoreg_core import EMBEDDED_MODEL, SamplingConfig, allowed_models

from . import keys, links
from .state import current_bundle


def render_sidebar() -> SamplingConfig:
    """Draw the sidebar and return the (normalised) sampling settings, also kept in session_state."""
    links.apply_model(st.query_params, st.session_state, allowed_models(), EMBEDDED_MODEL)
    sb = st.sidebar
    sb.header("Model")
    models = allowed_models()
    if st.session_state.get(keys.MODEL) not in models:
        st.session_state[keys.MODEL] = models[0]
    sb.selectbox("Model", models, key=keys.MODEL, help="The operator decides which models are offered.")
    if keys.MODEL_LINK_ERROR in st.session_state:
        sb.warning(st.session_state[keys.MODEL_LINK_ERROR])
    bundle = current_bundle()
    if bundle is not None:
        sb.caption(bundle.describe())

    sb.header("Sampling")
    temperature = sb.slider("Temperature (0 = greedy)", 0.0, 3.0, 0.8, 0.05, key=keys.CFG_TEMPERATURE,
                            help="Logits are divided by T before the softmax. T → 0 is greedy (argmax).")
    top_k = sb.number_input("Top-k (0 = off)", min_value=0, max_value=10_000_000, value=50, step=1,
                            key=keys.CFG_TOP_K, help="Keep only the k most likely tokens.")
    top_p = sb.slider("Top-p / nucleus (1 = off)", 0.0, 1.0, 0.95, 0.01, key=keys.CFG_TOP_P,
                      help="Keep the smallest set of top tokens whose probabilities add up to p.")
    min_p = sb.slider("Min-p (0 = off)", 0.0, 1.0, 0.0, 0.01, key=keys.CFG_MIN_P,
                      help="Drop tokens less likely than min-p × the top token's probability.")
    rep = sb.slider("Repetition penalty (1 = off)", 0.5, 2.0, 1.0, 0.05, key=keys.CFG_REPETITION,
                    help="Scores of tokens already in the text are divided (or multiplied) by this.")
    seed = sb.number_input("Seed", min_value=0, max_value=2**31 - 1, value=0, step=1, key=keys.CFG_SEED,
                           help="Same seed and settings → the same tokens, every time.")
    max_new = sb.number_input("Max new tokens", min_value=1, max_value=2048, value=64, step=1,
                              key=keys.CFG_MAX_NEW)
    stops = sb.text_area("Stop sequences (one per line, \\n = newline)", value="", key=keys.CFG_STOPS,
                         height=68)
    raw = SamplingConfig(temperature=float(temperature), top_k=int(top_k), top_p=float(top_p),
                         min_p=float(min_p), repetition_penalty=float(rep), seed=int(seed),
                         max_new_tokens=int(max_new),
                         stop_sequences=SamplingConfig.parse_stop_sequences(stops))
    vocab = bundle.vocab_size if bundle is not None else 1 << 30
    config, notes = raw.normalized(vocab)
    for note in notes:
        sb.info(note)
    if config.greedy:
        sb.caption("Temperature 0: greedy decoding, top-k/top-p/min-p play no part.")
    st.session_state[keys.CONFIG] = config
    return config
