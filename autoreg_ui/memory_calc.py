"""The memory calculator's controller: which model, how many tokens, batch, and two precisions.

The weights and the KV cache may be stored at different precisions (4-bit weights with a 16-bit
cache is the common serving setup), so each has its own box. Choosing a preset moves the length,
batch and precision widgets to the preset's values; values left by another model are reset, never
trusted. Every number comes from the chosen ``ModelSpec``. State is a plain mapping (tests pass a dict);
only ``widgets`` and ``section`` draw.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import replace

import streamlit as st

from autoreg_core.spec import PRECISIONS, PRESETS, ModelSpec, precision_name

from . import attention_text as text
from . import keys
from .charts import show_chart
from .figures import cache as fig_cache
from .format import human_bytes

LOADED = "Loaded model"
SEQ_OPTIONS = [2 ** i for i in range(4, 21)]  # 16 … 1M tokens
PRECISION_NAMES = list(PRECISIONS)
MAX_BATCH = 256
KEPT = (keys.ATT_PRESET, keys.ATT_SEQ, keys.ATT_BATCH, keys.ATT_PRECISION, keys.ATT_CACHE_PRECISION)


def presets(loaded: ModelSpec) -> dict[str, ModelSpec]:
    """The loaded model at its full context first, then the published shapes of ``spec.PRESETS``."""
    here = replace(loaded, seq_len=loaded.max_positions,
                   note=f"The loaded model at its full {loaded.max_positions:,}-token context")
    return {LOADED: here, **PRESETS}


def preset_label(name: str, loaded_name: str) -> str:
    """The preset box's text: the loaded model's entry says which model it is."""
    return f"{name} ({loaded_name})" if name == LOADED else name


def seq_label(tokens: int) -> str:
    """16 → '16', 131072 → '128K'."""
    return f"{tokens // 1024}K" if tokens >= 1024 else str(tokens)


def _precision(bytes_per_element: float) -> str:
    name = precision_name(bytes_per_element)
    return name if name in PRECISIONS else "float16 / bfloat16"


def load_preset(state: MutableMapping, choices: dict[str, ModelSpec]) -> None:
    """Move the widgets to the chosen preset's sequence length, batch and precisions."""
    spec = choices.get(state.get(keys.ATT_PRESET), choices[LOADED])
    state[keys.ATT_SEQ] = min(SEQ_OPTIONS, key=lambda s: abs(s - spec.seq_len))
    state[keys.ATT_BATCH] = spec.batch
    state[keys.ATT_PRECISION] = _precision(spec.weight_bytes_per_param)
    state[keys.ATT_CACHE_PRECISION] = _precision(spec.cache_bytes_per_element)


def settle(state: MutableMapping, choices: dict[str, ModelSpec]) -> None:
    """Replace missing or stale widget values (first visit, another model's list) before drawing."""
    if state.get(keys.ATT_PRESET) not in choices:
        state[keys.ATT_PRESET] = LOADED
        load_preset(state, choices)
    batch = state.get(keys.ATT_BATCH)
    if (state.get(keys.ATT_SEQ) not in SEQ_OPTIONS or state.get(keys.ATT_PRECISION) not in PRECISIONS
            or state.get(keys.ATT_CACHE_PRECISION) not in PRECISIONS
            or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH):
        load_preset(state, choices)


def chosen(state: MutableMapping, choices: dict[str, ModelSpec]) -> ModelSpec:
    """The preset as the widgets set it: its length, batch, weight and cache precision."""
    spec = choices[state[keys.ATT_PRESET]]
    spec = spec.with_precision(weight_bytes=PRECISIONS[state[keys.ATT_PRECISION]],
                               cache_bytes=PRECISIONS[state[keys.ATT_CACHE_PRECISION]])
    return replace(spec, seq_len=int(state[keys.ATT_SEQ]), batch=int(state[keys.ATT_BATCH]))


def widgets(choices: dict[str, ModelSpec], loaded_name: str) -> ModelSpec:
    """Draw the calculator's row of widgets (after settling stale values) and return the chosen spec."""
    settle(st.session_state, choices)
    c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 2])
    c1.selectbox("Model", list(choices), key=keys.ATT_PRESET, on_change=load_preset,
                 args=(st.session_state, choices), format_func=lambda n: preset_label(n, loaded_name))
    c2.select_slider("Sequence length (tokens)", SEQ_OPTIONS, key=keys.ATT_SEQ, format_func=seq_label)
    c3.slider("Batch size", 1, MAX_BATCH, key=keys.ATT_BATCH)
    c4.selectbox("Weights", PRECISION_NAMES, key=keys.ATT_PRECISION, help="Precision of the weights.")
    c5.selectbox("KV cache", PRECISION_NAMES, key=keys.ATT_CACHE_PRECISION,
                 help="Precision of the cache: often 16 bits even when the weights are quantised to 4.")
    return chosen(st.session_state, choices)


def section(loaded: ModelSpec, loaded_name: str) -> None:
    """The calculator: its widgets, the cache and weight sizes, and the bar chart of both."""
    calc = widgets(presets(loaded), loaded_name)
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
