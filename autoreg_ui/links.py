"""Reading the URL: ``?layer=3&head=mean`` on the attention page, ``?model=`` for the sidebar.

A link is applied once per distinct link (so moving a slider afterwards is not undone by the URL
still carrying it), and a value that does not fit the model gets a message saying what was wrong,
never a crash. Everything here takes the query and the state as plain mappings, so tests pass dicts.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping

from . import keys, messages

MEAN = -1  # the head "index" of the mean over all heads
MEAN_WORDS = ("mean", "avg", "average")
_UNSHOWN = re.compile(r"[^A-Za-z0-9./\-]")  # characters of a link value a message never echoes


def _echo(text: str, limit: int = 16) -> str:
    """A link value as a message may quote it: short, and nothing markdown or HTML could act on."""
    return repr(_UNSHOWN.sub("?", text[:limit]) + ("…" if len(text) > limit else ""))


def parse_index(raw: object, n: int, name: str, allow_mean: bool = False) -> tuple[int | None, str | None]:
    """A layer/head from a link → (valid index or None, message or None).

    Nothing given → (None, None). ``allow_mean``: 'mean'/'avg'/'average' → ``MEAN``.
    """
    if raw is None:
        return None, None
    text = str(raw).strip()
    if text == "":
        return None, None
    if allow_mean and text.lower() in MEAN_WORDS:
        return MEAN, None
    mean_hint = " or 'mean'" if allow_mean else ""
    if not re.fullmatch(r"[+-]?\d{1,9}", text):
        return None, f"The {name} {_echo(text)} in the link is not a whole number{mean_hint}; it was ignored."
    value = int(text)
    if not 0 <= value < n:
        return None, (f"The {name} {value} in the link does not exist: this model has {name}s 0–{n - 1}"
                      f"{mean_hint}; it was ignored.")
    return value, None


def _new_link(query: Mapping, state: MutableMapping, names: tuple[str, ...], seen_key: str) -> tuple | None:
    """The link's values if this link has not been applied yet (and mark it applied), else None."""
    link = tuple(query.get(name) for name in names)
    if all(v is None for v in link) or state.get(seen_key) == link:
        return None
    state[seen_key] = link
    return link


def apply_layer_head(query: Mapping, state: MutableMapping, n_layers: int, n_heads: int) -> list[str]:
    """``?layer=&head=`` set the attention page's layer slider and head box, once per distinct link.

    Bad values leave the widget as it was and queue a warning; the warnings are also returned.
    """
    link = _new_link(query, state, ("layer", "head"), keys.ATT_LINK_SEEN)
    if link is None:
        return []
    notes = []
    for raw, n, name, key, allow_mean in ((link[0], n_layers, "layer", keys.ATT_LAYER, False),
                                          (link[1], n_heads, "head", keys.ATT_HEAD, True)):
        value, note = parse_index(raw, n, name, allow_mean)
        if note:
            notes.append(note)
            messages.say(note, "warning", state)
        elif value is not None:
            state[key] = value
    return notes


def apply_model(query: Mapping, state: MutableMapping, allowed: list[str], default: str) -> str | None:
    """``?model=`` selects an allowed model once; an unknown name keeps ``default`` and returns a message
    (also kept under ``keys.MODEL_LINK_ERROR``, where the sidebar shows it)."""
    link = _new_link(query, state, ("model",), keys.MODEL_LINK_SEEN)
    if link is None or link[0] == "":
        return None
    if link[0] in allowed:
        state[keys.MODEL] = link[0]
        return None
    note = f"Unknown model {_echo(str(link[0]), 80)} in the link; using {default}. Available: {', '.join(allowed)}."
    state[keys.MODEL_LINK_ERROR] = note
    return note
