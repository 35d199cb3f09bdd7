"""The sidebar every page shares: model line, sampling settings (bound to the URL), teacher's tools.

A student following a class sees none of their own settings: the teacher's apply to the text they see. Their
own stay in the tab and are there again, whole, when they explore on their own (``OWN_WIDGETS``).
"""
from __future__ import annotations

import streamlit as st

from autoreg_core import EMBEDDED_MODEL, SamplingConfig
from autoreg_core.engine.model_spec import dtype_name
from autoreg_ui import charts, family_text, keys, limits, settings
from autoreg_ui.classroom import mode as class_mode
from autoreg_ui.classroom import text as class_text
from autoreg_ui.sharing import export, links, presenter
from autoreg_ui.state import allowed_models, current_bundle, keep_widget_values, session_or_start

URL = "query-params"  # Streamlit's own binding: the widget's value lives in the URL (left out at its default)
DEFAULT = settings.SIDEBAR_DEFAULTS
RANGE = {s.key: (s.kind(s.low), s.kind(s.high)) for s in settings.SETTINGS}
# A follower's sidebar does not draw the learner's own choices. The settings are bound to the URL, and Streamlit
# keeps a bound widget's value while it is not drawn (tests/ui/test_sidebar_following.py); the model box is not
# bound, so it is kept here (writing the bound ones back as well only makes Streamlit warn that a widget "had its
# value set via the Session State API").
OWN_WIDGETS = (keys.MODEL,)


def render_sidebar(following: bool = False) -> SamplingConfig:
    """Draw the sidebar and return the (normalised) sampling settings, also kept in session_state.

    ``following``: a student following their teacher; the teacher's model and settings make the text, so the
    learner's own are neither drawn nor changed (``following_sidebar``).
    """
    links.apply_model(st.query_params, st.session_state, allowed_models(), EMBEDDED_MODEL)
    if following:
        return following_sidebar()
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
        sb.caption(model_line(bundle))

    sb.header("Sampling")
    temperature = sb.slider("Temperature (0 = greedy)", *RANGE[keys.CFG_TEMPERATURE], DEFAULT.temperature, 0.05,
                            key=keys.CFG_TEMPERATURE, bind=URL,
                            help="Logits are divided by T before the softmax. T → 0 is greedy (argmax).")
    top_k = sb.number_input("Top-k (0 = off)", *RANGE[keys.CFG_TOP_K], DEFAULT.top_k, step=1,
                            key=keys.CFG_TOP_K, bind=URL, help="Keep only the k most likely tokens.")
    top_p = sb.slider("Top-p / nucleus (1 = off)", *RANGE[keys.CFG_TOP_P], DEFAULT.top_p, 0.01,
                      key=keys.CFG_TOP_P, bind=URL,
                      help="Keep the smallest set of top tokens whose probabilities add up to p.")
    min_p = sb.slider("Min-p (0 = off)", *RANGE[keys.CFG_MIN_P], DEFAULT.min_p, 0.01, key=keys.CFG_MIN_P, bind=URL,
                      help="Drop tokens less likely than min-p × the top token's probability.")
    rep = sb.slider("Repetition penalty (1 = off)", *RANGE[keys.CFG_REPETITION], DEFAULT.repetition_penalty, 0.05,
                    key=keys.CFG_REPETITION, bind=URL,
                    help="Scores of tokens already in the text are divided (or multiplied) by this.")
    seed = sb.number_input("Seed", *RANGE[keys.CFG_SEED], DEFAULT.seed, step=1, key=keys.CFG_SEED, bind=URL,
                           help="Same seed and settings → the same tokens, every time.")
    max_new = sb.number_input("Max new tokens", *RANGE[keys.CFG_MAX_NEW], DEFAULT.max_new_tokens, step=1,
                              key=keys.CFG_MAX_NEW, bind=URL)
    stops = sb.text_area("Stop sequences (one per line, \\n = newline)", value="", key=keys.CFG_STOPS,
                         height=68, bind=URL)
    raw = SamplingConfig(temperature=float(temperature), top_k=int(top_k), top_p=float(top_p),
                         min_p=float(min_p), repetition_penalty=float(rep), seed=int(seed),
                         max_new_tokens=int(max_new),
                         stop_sequences=SamplingConfig.parse_stop_sequences(stops))
    if int(max_new) > limits.max_new_tokens():
        sb.info(f"This server caps max new tokens at {limits.max_new_tokens()} per generation "
                "(the operator's AUTOREG_MAX_NEW_TOKENS).")
    vocab = bundle.spec.vocab if bundle is not None else 1 << 30
    config, notes = raw.normalized(vocab)
    for note in notes:
        sb.info(note)
    if config.greedy:
        sb.caption("Temperature 0: greedy decoding, top-k/top-p/min-p play no part.")
    st.session_state[keys.CONFIG] = config

    sb.header("Teach with it")
    presenter.toggle(sb)
    if class_mode.start_in_sidebar(st.session_state):
        class_mode.start_class_button(sb)
    sb.caption("Keys on every page: **N** next token · **G** generate N · **U** undo · **X** reset · "
               "**A** draw again (sampling lab) or run the race (cost page). The address bar always holds "
               "a link that rebuilds this moment.")
    return config


def model_line(bundle) -> str:
    """The caption under the model box: name, family (from the checkpoint's config), parameters, device, dtype."""
    return family_text.model_line(bundle.name, bundle.config.model_type, bundle.spec.n_params, bundle.device.type,
                                  dtype_name(bundle.dtype))


def following_sidebar() -> SamplingConfig:
    """A follower's sidebar: the model line, a caption saying the teacher's settings apply, presenter mode.

    Nothing here can move while the class leads, and a follower's redraw (every teacher step) draws four
    elements instead of some twenty: the learner's own settings are kept, not drawn, and come back unchanged.
    """
    keep_widget_values(st.session_state, OWN_WIDGETS)
    sb = st.sidebar
    sb.header("Model")
    bundle = current_bundle()
    if bundle is not None:
        sb.caption(model_line(bundle))
    sb.caption(class_text.SIDEBAR_FOLLOWING)
    presenter.toggle(sb)
    return st.session_state.get(keys.CONFIG) or DEFAULT


def render_tools() -> None:
    """Share and save (drawn after a link or file was replayed, so it offers the rebuilt session).

    The files are made when clicked, from the session as it is then: steps taken since (in a fragment,
    which does not redraw the sidebar) are in them.
    """
    export.sidebar_tools(st.sidebar, session_or_start(), st.session_state.get(keys.CONFIG),
                         charts.kept_store(st.session_state))
