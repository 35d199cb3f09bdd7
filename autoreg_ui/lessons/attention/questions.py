"""The attention page's predict-then-check questions: the newest query's keys and focus, the cache's growth."""
from __future__ import annotations

from autoreg_core.engine.attention import supports_attention
from autoreg_core.experiments import attention_rows as av
from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.attention import text
from autoreg_ui.predict import Checked, Live, Question, answer, bucket, token_label


def _newest_keys(session) -> tuple[int, int] | None:
    """(position, keys its query scored) of the newest token fed in, read from its captured attention row
    (its own length, not the cache's), or None when that row was not captured."""
    if session.records:
        rec = session.records[-1]
        return None if rec.attention is None else (rec.cache_len - 1, int(rec.attention.shape[-1]))
    pre = session.prefill_record
    return None if pre is None or pre.attention is None else (pre.n_tokens - 1, int(pre.attention.shape[-1]))


def _newest_fill(live: Live) -> dict:
    pos = max(0, live.session.cache_len - 1) if live.session is not None else 0
    return {"pos": pos, "pos_plus": pos + 1}


def _no_row(live: Live) -> str:
    """Why the newest row is missing: the model's layers cannot be recomputed, or the step skipped capture."""
    return text.CHECK_NOT_CAPTURED if supports_attention(live.bundle.model) else text.CHECK_NOT_RECOMPUTABLE


def attention_keys(live: Live) -> Checked:
    read = _newest_keys(live.session)
    if read is None:
        raise ValueError(_no_row(live))
    pos, keys = read
    windows = live.bundle.spec.layer_windows
    sliding = [w for w in windows if w is not None and w < keys]  # layers whose window the row has outgrown
    if sliding and len(sliding) == len(windows):
        raise ValueError(text.KEYS_ALL_SLIDING.format(window=max(sliding), window_less=max(sliding) - 1, keys=keys))
    choices = (pos, pos + 1, 1)
    if keys not in choices:
        raise ValueError(text.NONE_OF_THE_CHOICES.format(keys=keys))
    said = answer(text.ATTENTION_KEYS, keys=keys, pos=pos, pos_plus=pos + 1)
    if sliding:
        said += " " + text.KEYS_SOME_SLIDING.format(n=len(sliding), layers=len(windows), window=max(sliding))
    return Checked(choices.index(keys), said)


def _focus_layer(live: Live) -> int:
    return live.bundle.spec.n_layers // 2


def attention_focus(live: Live) -> Checked:
    newest = av.latest_row(live.session)
    if newest is None or newest[1] is None:
        raise ValueError(_no_row(live))
    layer = _focus_layer(live)
    weights = av.select_heads(newest[1], layer, None)
    pos = int(weights.argmax())
    top, first = float(weights[pos]), float(weights[0])
    reading = text.FOCUS_ON_FIRST if pos == 0 else text.FOCUS_ELSEWHERE
    return Checked(0 if top > 0.5 else 1, answer(text.ATTENTION_FOCUS, layer=layer, top=top, pos=pos, first=first,
                                                 label=token_label(live, live.session.ids[pos]), reading=reading))


def attention_growth(live: Live) -> Checked:
    spec = live.bundle.spec
    per = spec.cache_bytes_per_position
    return Checked(bucket(per, (10 * 1024, 100 * 1024, 1024 ** 2)),
                   answer(text.ATTENTION_GROWTH, per_token=human_bytes(per), layers=spec.n_layers,
                          kv_heads=spec.n_kv_heads, head_dim=spec.head_dim, bytes=spec.cache_bytes_per_element,
                          at_2048=human_bytes(spec.cache_bytes(2048))))


QUESTIONS: tuple[Question, ...] = (
    Question("keys", text.ATTENTION_KEYS, attention_keys, fill=_newest_fill),
    Question("growth", text.ATTENTION_GROWTH, attention_growth, needs_session=False),
    Question("focus", text.ATTENTION_FOCUS, attention_focus, fill=lambda live: {"layer": _focus_layer(live)}),
)
