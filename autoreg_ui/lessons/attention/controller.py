"""The attention page's controller: the layer/head choice, the backfill button, one consistent read,
and the memory calculator (which model, how many tokens, batch, two precisions).

The weights and the KV cache may be stored at different precisions (4-bit weights with a 16-bit
cache is the common serving setup), so each has its own box. Choosing a preset moves the length,
batch and precision widgets to the preset's values; values left by another model are reset, never
trusted. Every number comes from the chosen ``ModelSpec``. State is a plain mapping (tests pass a
dict). Nothing here draws: the page (``page``) puts the calculator and the button on the screen.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, replace

import numpy as np
import torch

from autoreg_core.engine import kv_cache as kvc
from autoreg_core.engine.model_spec import PRECISIONS, PRESETS, ModelSpec, precision_name
from autoreg_core.experiments import attention_rows as av
from autoreg_ui import messages
from autoreg_ui.lessons.attention import keys, text
from autoreg_ui.sharing.link_codec import MEAN

MAX_TRIANGLE = 256  # the heatmap shows at most this many of the latest positions


def settle_layer_head(state: MutableMapping, n_layers: int, n_heads: int) -> None:
    """A layer or head this model does not have (first visit, left by a bigger model) → a default:
    the middle layer, head 0."""
    layer, head = state.get(keys.ATT_LAYER), state.get(keys.ATT_HEAD)
    if type(layer) is not int or not 0 <= layer < n_layers:
        state[keys.ATT_LAYER] = n_layers // 2
    if type(head) is not int or head not in (MEAN, *range(n_heads)):
        state[keys.ATT_HEAD] = 0


def head_options(n_heads: int) -> list[int]:
    """The head box's values: the mean over heads, then every head."""
    return [MEAN, *range(n_heads)]


def head_label(option: int, gqa: av.GQAInfo) -> str:
    if option == MEAN:
        return f"mean of all {gqa.n_heads} heads"
    return f"head {option} (reads K/V head {gqa.kv_of_query[option]})"


def head_index(option: int) -> int | None:
    """The engine's head argument: None for the mean over heads."""
    return None if option == MEAN else int(option)


def head_name(head: int | None, n_heads: int) -> str:
    """For titles: 'head 3' or 'mean of 9 heads'."""
    return f"mean of {n_heads} heads" if head is None else f"head {head}"


def first_shown(n_rows: int) -> int:
    """The first position the triangle shows: at most ``MAX_TRIANGLE`` of the latest, so the page stays light."""
    return max(0, n_rows - MAX_TRIANGLE)


def inline_code(label: str) -> str:
    """A token label as a markdown code span (a backtick inside would end the span early)."""
    return "`" + label.replace("`", "ˋ") + "`"


FILL_ON_ARRIVAL_TOKENS = 256  # a text this short gets its missing rows on arrival: one pass, well under a second here


def fill_on_arrival(session) -> int:
    """The rows a short text is missing (steps taken on another page, capture off), computed when the page opens,
    so the learner sees the picture rather than grey rows and a button. Longer texts keep the button."""
    if av.n_rows(session) > FILL_ON_ARRIVAL_TOKENS or av.MISSING not in av.row_sources(session):
        return 0
    ok, _ = av.can_backfill(session)
    return av.backfill(session) if ok else 0


def backfill(session, state: MutableMapping | None = None) -> int:
    """The backfill button: recompute the missing rows, and say what happened."""
    try:
        filled = av.backfill(session)
    except ValueError as exc:
        messages.say(str(exc), "warning", state)
        return 0
    messages.say(f"Recomputed {filled} missing rows with one full forward pass.", "success", state)
    return filled


def missing_row(capturable: bool, family: str) -> tuple[str, str, bool]:
    """(level, sentence, offer the backfill button) for a query whose attention row is missing: a step taken
    without capture can be backfilled; a model whose layers cannot be recomputed has no rows at all."""
    if capturable:
        return "warning", text.NOT_CAPTURED, True
    return "info", text.not_recomputable(family), False


def cache_reading(measured: int, formula: int, per_position: float, shapes: list[kvc.LayerCacheShape],
                  positions: int, windows: tuple[int | None, ...], family: str) -> tuple[str, str]:
    """(level, sentence) for the measured cache beside the formula. ``windows``: each layer's sliding window
    (``ModelSpec.layer_windows``; None: the layer keeps every position). A sliding layer keeps at most window − 1
    positions, so once it holds them the next token adds nothing to it: said so, with what a new token adds now.
    The formula already counts only the positions each layer keeps, so any difference is an error."""
    equal, said = text.cache_check(measured, formula, per_position)
    full = [i for i, w in enumerate(windows) if w is not None and positions >= w - 1]
    if not equal or not full or not positions:
        return ("success" if equal else "error"), said
    n_layers = len(windows) or len(shapes)
    adds = per_position * (n_layers - len(full)) / n_layers  # the layers that still keep every position
    window = max(windows[i] for i in full)
    return "success", text.sliding_cache_text(formula, len(full), n_layers, window - 1, window, family, adds)


@dataclass
class Picture:
    """One consistent read of the session for the page (taken under its lock)."""

    labels: list[str]  # every token of the sequence, as chips show them
    n_rows: int  # query positions that have been through the model
    n_steps: int
    latest: tuple[int, torch.Tensor | None] | None  # the newest query's position and row
    z: np.ndarray  # [N, N] triangle of the chosen layer/head
    sources: list[str]  # per row: prefill / decode / missing
    shapes: list[kvc.LayerCacheShape]
    measured: int  # bytes of the live cache, from its tensors
    positions: int  # the live cache's length
    timeline: list[kvc.CachePoint]
    times: kvc.PhaseTimes | None

    @property
    def query(self) -> int | None:
        """The newest query's position (None before any has been through the model)."""
        return None if self.latest is None else self.latest[0]


def read(session, layer: int, head: int | None) -> Picture:
    """Everything the page draws, read while no step can run in between."""
    with session.lock:
        z, sources = av.triangle(session, layer, head)
        return Picture(labels=[v.label for v in session.views()], n_rows=av.n_rows(session),
                       n_steps=len(session.records), latest=av.latest_row(session), z=z, sources=sources,
                       shapes=kvc.layer_shapes(session.cache), measured=kvc.measured_bytes(session.cache),
                       positions=session.cache_len, timeline=kvc.cache_timeline(session),
                       times=kvc.solo_phase_times(session))


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
