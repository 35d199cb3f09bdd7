"""The attention page's controller: the layer/head choice, the backfill button, one consistent read.

State is a plain mapping (tests pass a dict); only ``backfill_offer`` draws (a button or its reason).
"""
from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

from autoreg_core import attention_view as av
from autoreg_core import cache as kvc

from . import keys, messages
from .links import MEAN

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


def backfill(session, state: MutableMapping | None = None) -> int:
    """The backfill button: recompute the missing rows, and say what happened."""
    try:
        filled = av.backfill(session)
    except ValueError as exc:
        messages.say(str(exc), "warning", state)
        return 0
    messages.say(f"Recomputed {filled} missing rows with one full forward pass.", "success", state)
    return filled


def backfill_offer(session, where: str) -> None:
    """The backfill button where rows are missing, or why it cannot be offered (``where`` keeps keys apart)."""
    ok, why = av.can_backfill(session)
    if ok:
        st.button("Compute attention for the whole sequence", key=f"{keys.ATT_BACKFILL}_{where}",
                  on_click=backfill, args=(session,),
                  help="One forward pass over all tokens on a fresh cache; fills the rows that were not captured.")
    else:
        st.caption(why)


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


def read(session, layer: int, head: int | None) -> Picture:
    """Everything the page draws, read while no step can run in between."""
    with session.lock:
        z, sources = av.triangle(session, layer, head)
        return Picture(labels=[v.label for v in session.views()], n_rows=av.n_rows(session),
                       n_steps=len(session.records), latest=av.latest_row(session), z=z, sources=sources,
                       shapes=kvc.layer_shapes(session.cache), measured=kvc.measured_bytes(session.cache),
                       positions=session.cache_len, timeline=kvc.cache_timeline(session),
                       times=kvc.phase_times(session))
