"""Links: the URL holds what it takes to rebuild a tab, and opening it rebuilds the tab exactly.

Reading: ``?layer=3&head=mean`` on the attention page, ``?model=`` for the sidebar, and the whole
session (prompt, chat mode, steps, forced tokens, settings, seed; format below). A link is applied once
per distinct link (so moving a slider afterwards is not undone by the URL still carrying it), and a
value that does not fit gets a message saying what was wrong, never a crash: values are parsed as
numbers, ids and words, never run or rendered. The parsing takes the query and the state as plain
mappings, so tests pass dicts; ``read_on_load``, ``replay_pending`` and ``sync_url`` are the glue.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from typing import Callable
from urllib.parse import quote_plus, urlencode, urlsplit

import streamlit as st

from autoreg_core import SamplingConfig
from autoreg_core.config import MAX_NEW_TOKENS_CAP
from autoreg_core.replay import MAX_STEPS, Recipe, ReplayError, Segment, import_session, recipe_of, replay

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


# ================================================================ the whole state in the URL
# A link rebuilds this tab exactly: the page is the URL's path; the prompt (or the id of a long prompt
# kept on the server), chat mode, the number of steps, the forced tokens, the settings of earlier steps
# and the seed they ran with are parameters the app writes on every change; the sidebar's settings are
# widgets bound to the URL with Streamlit's own ``bind="query-params"`` (a value equal to its default
# is left out). Opening a link replays the steps (sessions replay exactly, as ``generate`` does).
#
#   /sampling?prompt=The+capital+of+France+is&steps=6&forced=3-1234.5-42&seg=1~t0.3&seg=4~t1.2~k20
#            &run_seed=7&cfg_temperature=1.2&cfg_top_k=20&model=...&present=1
#
#   prompt    the prompt text (left out when it is the app's default and nothing ran)
#   pid       instead of prompt: the id of a long prompt kept on the server (``PromptStore``)
#   chat      1 = the prompt is wrapped in the chat template
#   steps     how many decode steps ran
#   forced    STEP-TOKEN pairs joined by '.': at that step that token id was forced
#   seg       the settings of each stretch of steps, one value per stretch: START, then ~CODE VALUE for
#             every setting that differs from the sidebar's default (t temperature, k top-k, p top-p,
#             m min-p, r repetition penalty, n max new tokens, s stop sequences as base64url JSON);
#             left out when every step ran under the sidebar's current settings
#   run_seed  the seed the steps ran with, when the sidebar's seed has moved since
#   present   1 = presenter mode;  model, layer, head: as before
PROMPT, PROMPT_ID, CHAT, STEPS, FORCED, SEGMENT, RUN_SEED, PRESENT = (
    "prompt", "pid", "chat", "steps", "forced", "seg", "run_seed", "present")
RECIPE_PARAMS = (PROMPT, PROMPT_ID, CHAT, STEPS, FORCED, SEGMENT, RUN_SEED)
OTHER_PARAMS = ("model", "layer", "head", PRESENT)
MAX_LINK_PROMPT = 2000  # characters of a prompt read from a link; longer ones travel as a pid
MAX_URL_PROMPT = 1500  # URL-encoded characters a prompt may take before it is kept on the server
MAX_LINK_STEPS = MAX_STEPS
MAX_SEGMENTS = 64
MAX_VALUE = 32_000  # characters of any other link value (2,048 forced tokens fit)
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class Setting:
    """A sidebar setting: its widget key (= URL parameter), config field, code in ``seg``, type and range."""

    key: str
    field: str
    code: str
    kind: type
    low: float
    high: float
    name: str


SETTINGS = (
    Setting(keys.CFG_TEMPERATURE, "temperature", "t", float, 0.0, 3.0, "temperature"),
    Setting(keys.CFG_TOP_K, "top_k", "k", int, 0, 10_000_000, "top-k"),
    Setting(keys.CFG_TOP_P, "top_p", "p", float, 0.0, 1.0, "top-p"),
    Setting(keys.CFG_MIN_P, "min_p", "m", float, 0.0, 1.0, "min-p"),
    Setting(keys.CFG_REPETITION, "repetition_penalty", "r", float, 0.5, 2.0, "repetition penalty"),
    Setting(keys.CFG_SEED, "seed", "", int, 0, 2**31 - 1, "seed"),
    Setting(keys.CFG_MAX_NEW, "max_new_tokens", "n", int, 1, MAX_NEW_TOKENS_CAP, "max new tokens"),
)
STOPS_CODE = "s"
SIDEBAR_DEFAULTS = SamplingConfig(temperature=0.8, top_k=50, top_p=0.95, min_p=0.0, repetition_penalty=1.0,
                                  seed=0, max_new_tokens=64)
KNOWN_PARAMS = frozenset(RECIPE_PARAMS + OTHER_PARAMS + tuple(s.key for s in SETTINGS) + (keys.CFG_STOPS,))


@dataclass(frozen=True)
class Link:
    """What a link asks to rebuild; ``segments`` holds (start, settings that differ from the defaults)."""

    prompt: str | None = None
    prompt_id: str | None = None
    chat: bool = False
    steps: int = 0
    forced: dict[int, int] = field(default_factory=dict)
    segments: tuple[tuple[int, dict], ...] = ()  # () = every step ran under the sidebar's settings
    run_seed: int | None = None


class LinkError(ValueError):
    """One part of a link that cannot be used; the message names it and says why."""


def values(query: Mapping) -> dict[str, list[str]]:
    """Every parameter with all its values, from ``st.query_params`` (``get_all``) or a plain dict."""
    out = {}
    for name in list(query):
        raw = query.get_all(name) if hasattr(query, "get_all") else query[name]
        out[str(name)] = [str(v) for v in raw] if isinstance(raw, (list, tuple)) else [str(raw)]
    return out


def flag(raw: str | None, name: str) -> bool:
    """'1'/'true'/'yes'/'on' → True, '0'/'false'/'no'/'off'/'' → False, anything else is an error."""
    text = (raw or "").strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise LinkError(f"The link's {name} {_echo(raw or '')} is not 1 or 0.")


def read(query: Mapping) -> tuple[Link | None, list[str]]:
    """The link's recipe (None when it carries none, or no usable prompt) and one message per bad part.

    Nothing here runs or renders what the link holds: values are parsed as numbers, ids and words, and
    a message quotes at most a short, defanged excerpt.
    """
    params = values(query)
    link, notes = _read_recipe(params)
    return link, _check_others(params) + notes


def _read_recipe(params: dict[str, list[str]]) -> tuple[Link | None, list[str]]:
    notes: list[str] = []
    if not any(name in params for name in RECIPE_PARAMS):
        return None, notes
    one = {name: params[name][-1] for name in RECIPE_PARAMS if name in params and name != SEGMENT}
    try:
        for name, text in one.items():
            if len(text) > MAX_VALUE and name != PROMPT:
                raise LinkError(f"The link's {name} is {len(text):,} characters long; at most {MAX_VALUE:,} "
                                "are read.")
        prompt, prompt_id = _prompt(one)
        chat = flag(one.get(CHAT), "chat mode")
    except LinkError as exc:
        return None, notes + [f"{exc} The link's session was not rebuilt."]
    base = Link(prompt=prompt, prompt_id=prompt_id, chat=chat)
    try:
        steps = _whole(one.get(STEPS, "0"), "number of steps", 0, MAX_LINK_STEPS)
        forced = _forced(one.get(FORCED, ""), steps)
        segments = _segments(params.get(SEGMENT, []), steps)
        run_seed = _whole(one[RUN_SEED], "seed", 0, 2**31 - 1) if RUN_SEED in one else None
    except LinkError as exc:
        return base, notes + [f"{exc} Only the prompt was taken from the link; its steps were not replayed."]
    return replace(base, steps=steps, forced=forced, segments=segments, run_seed=run_seed), notes


def _check_others(params: dict[str, list[str]]) -> list[str]:
    """Messages for unknown parameters and for sidebar settings Streamlit will not take (it drops them)."""
    notes = []
    unknown = sorted(name for name in params if not _known(name))
    if unknown:
        shown = ", ".join(_echo(name) for name in unknown[:5]) + (" …" if len(unknown) > 5 else "")
        notes.append(f"The link has {len(unknown)} part(s) this app does not know: {shown}; ignored.")
    for setting in SETTINGS:
        if setting.key in params:
            text = params[setting.key][-1]
            try:
                _number(text, setting)
            except LinkError as exc:
                default = getattr(SIDEBAR_DEFAULTS, setting.field)
                notes.append(f"{exc} The sidebar starts from its default, {default:g}.")
    if keys.CFG_STOPS in params and len(params[keys.CFG_STOPS][-1]) > MAX_VALUE:
        notes.append(f"The link's stop sequences are {len(params[keys.CFG_STOPS][-1]):,} characters long; "
                     "that is more than any stop sequence needs.")
    if PRESENT in params:
        try:
            flag(params[PRESENT][-1], "presenter mode")
        except LinkError as exc:
            notes.append(f"{exc} Presenter mode stays as it was.")
    return notes


def _known(name: str) -> bool:
    """A parameter this app reads (or Streamlit's own embed options, which it reads itself)."""
    return name in KNOWN_PARAMS or name.lower() in ("embed", "embed_options")


def _prompt(one: dict[str, str]) -> tuple[str | None, str | None]:
    if PROMPT_ID in one:
        pid = one[PROMPT_ID].strip().lower()
        if not re.fullmatch(r"[0-9a-f]{12}", pid):
            raise LinkError(f"The link's prompt id {_echo(one[PROMPT_ID])} is not an id this app makes.")
        return None, pid
    if PROMPT not in one:
        return None, None
    text = one[PROMPT]
    if len(text) > MAX_LINK_PROMPT:
        raise LinkError(f"The link's prompt is {len(text):,} characters long; a link carries at most "
                        f"{MAX_LINK_PROMPT:,} (load a session file for longer prompts).")
    if not text.strip():
        raise LinkError("The link's prompt is empty.")
    return text, None


def _whole(text: str, name: str, low: int, high: int) -> int:
    if not re.fullmatch(r"\s*\+?\d{1,10}\s*", text):
        raise LinkError(f"The link's {name} {_echo(text)} is not a whole number.")
    value = int(text)
    if not low <= value <= high:
        raise LinkError(f"The link's {name} {value} is outside {low}–{high}.")
    return value


def _number(text: str, setting: Setting) -> int | float:
    """A setting's value as the sidebar widget takes it, or an error saying why not."""
    if setting.kind is int:
        return _whole(text, setting.name, int(setting.low), int(setting.high))
    if not re.fullmatch(r"\s*[+-]?(\d{1,6}(\.\d{0,12})?|\.\d{1,12})([eE][+-]?\d{1,3})?\s*", text):
        raise LinkError(f"The link's {setting.name} {_echo(text)} is not a number.")
    value = float(text)
    if not setting.low <= value <= setting.high:
        raise LinkError(f"The link's {setting.name} {value:g} is outside {setting.low:g}–{setting.high:g}.")
    return value


def _forced(text: str, steps: int) -> dict[int, int]:
    """'3-1234.7-42' → {3: 1234, 7: 42}; every step must be one the link runs."""
    if text.strip() == "":
        return {}
    if not re.fullmatch(r"\d{1,4}-\d{1,9}(\.\d{1,4}-\d{1,9}){0,2047}", text.strip()):
        raise LinkError(f"The link's forced tokens {_echo(text)} are not STEP-TOKEN pairs joined by dots.")
    forced: dict[int, int] = {}
    for pair in text.strip().split("."):
        step, token = (int(part) for part in pair.split("-"))
        if step in forced:
            raise LinkError(f"The link forces step {step} twice.")
        if not 1 <= step <= steps:
            raise LinkError(f"The link forces a token at step {step}, but it runs {steps} steps.")
        forced[step] = token
    return forced


def _segments(texts: list[str], steps: int) -> tuple[tuple[int, dict], ...]:
    """``seg`` values → (start, {field: value}); starts rise from 1 and stay within the steps."""
    if not texts:
        return ()
    if len(texts) > MAX_SEGMENTS:
        raise LinkError(f"The link has {len(texts)} settings segments; at most {MAX_SEGMENTS} are read.")
    codes = {s.code: s for s in SETTINGS if s.code}
    segments, last = [], 0
    for text in texts:
        parts = text.strip().split("~")
        if len(text) > MAX_VALUE or not re.fullmatch(r"\d{1,4}", parts[0]):
            raise LinkError(f"The link's settings segment {_echo(text)} does not start with a step number.")
        start, overrides = int(parts[0]), {}
        if start <= last or start > max(steps, 1):
            raise LinkError(f"The link's settings segments must start at step 1 and rise, within its {steps} steps.")
        for part in parts[1:]:
            code, raw = part[:1], part[1:]
            if code == STOPS_CODE:
                overrides["stop_sequences"] = _stops(raw)
            elif code in codes:
                overrides[codes[code].field] = _number(raw, codes[code])
            else:
                raise LinkError(f"The link's settings segment has an unknown setting {_echo(part)}.")
        segments.append((start, overrides))
        last = start
    if segments[0][0] != 1:
        raise LinkError("The link's settings segments must start at step 1.")
    return tuple(segments)


def _stops(raw: str) -> tuple[str, ...]:
    try:
        data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise LinkError("The link's stop sequences cannot be read.") from exc
    if not isinstance(data, list) or len(data) > 16 or not all(isinstance(s, str) and 0 < len(s) <= 200 for s in data):
        raise LinkError("The link's stop sequences must be a short list of short texts.")
    return tuple(data)


def recipe_of_link(link: Link, prompt: str, current: SamplingConfig, vocab_size: int) -> Recipe:
    """The recipe a link describes; ``current`` is the sidebar's (normalised) settings, the link's own ones."""
    seed = link.run_seed if link.run_seed is not None else int(current.seed)
    if link.segments:
        segments = tuple(Segment(start, replace(SIDEBAR_DEFAULTS, seed=seed, **overrides).normalized(vocab_size)[0])
                         for start, overrides in link.segments)
    else:
        segments = (Segment(1, replace(current, seed=seed)),)
    return Recipe(prompt=prompt, chat=link.chat, seed=seed, steps=link.steps, segments=segments,
                  forced=dict(link.forced))


# ---------------------------------------------------------------- writing the URL (pure)
def recipe_params(recipe: Recipe, current: SamplingConfig, default_prompt: str,
                  keep_long: Callable[[str], str]) -> dict[str, str | list[str]]:
    """The URL parameters that rebuild ``recipe`` given the sidebar's ``current`` settings (defaults left out).

    ``keep_long(prompt)`` keeps a prompt too long for a URL on the server and returns its id.
    """
    out: dict[str, str | list[str]] = {}
    if recipe.prompt != default_prompt or recipe.chat or recipe.steps:
        if len(quote_plus(recipe.prompt)) > MAX_URL_PROMPT or len(recipe.prompt) > MAX_LINK_PROMPT:
            out[PROMPT_ID] = keep_long(recipe.prompt)
        else:
            out[PROMPT] = recipe.prompt
    if recipe.chat:
        out[CHAT] = "1"
    if not recipe.steps:
        return out
    out[STEPS] = str(recipe.steps)
    if recipe.forced:
        out[FORCED] = ".".join(f"{step}-{token}" for step, token in sorted(recipe.forced.items()))
    unseeded = replace(current, seed=0)
    if len(recipe.segments) > 1 or replace(recipe.segments[0].config, seed=0) != unseeded:
        out[SEGMENT] = [segment_text(s) for s in recipe.segments]
    if recipe.seed != int(current.seed):
        out[RUN_SEED] = str(recipe.seed)
    return out


def settings_params(config: SamplingConfig) -> dict[str, str]:
    """The sidebar's settings as its bound widgets put them in the URL (a default value is left out)."""
    out = {s.key: _num(getattr(config, s.field)) for s in SETTINGS
           if getattr(config, s.field) != getattr(SIDEBAR_DEFAULTS, s.field)}
    if config.stop_sequences:
        out[keys.CFG_STOPS] = stops_text(config.stop_sequences)
    return out


def stops_text(stops: tuple[str, ...]) -> str:
    """Stop sequences as the sidebar's text box holds them: one per line, newlines and tabs written \\n, \\t."""
    return "\n".join(stop.replace("\n", "\\n").replace("\t", "\\t") for stop in stops)


def share_url(base: str | None, session, config: SamplingConfig, model: str | None,
              keep_long: Callable[[str], str]) -> str | None:
    """The link of a session as it is now (what the address bar holds, without presenter mode).

    Built from the session itself, so it can be made away from the page (a download made when clicked).
    """
    from .state import DEFAULT_PROMPT

    if not base:
        return None
    if not urlsplit(base).path:
        base += "/"
    recipe = recipe_params(recipe_of(session, config), config, DEFAULT_PROMPT, keep_long)
    params: dict[str, str | list[str]] = {**settings_params(config), **recipe}
    if model:
        params["model"] = model
    return base + ("?" + urlencode(params, doseq=True) if params else "")


def segment_text(segment: Segment) -> str:
    """START~t0.3~k20…: the settings of the segment that differ from the sidebar's defaults."""
    parts = [str(segment.start)]
    for setting in SETTINGS:
        value = getattr(segment.config, setting.field)
        if setting.code and value != getattr(SIDEBAR_DEFAULTS, setting.field):
            parts.append(setting.code + _num(value))
    if segment.config.stop_sequences:
        blob = json.dumps(list(segment.config.stop_sequences), ensure_ascii=False).encode("utf-8")
        parts.append(STOPS_CODE + base64.urlsafe_b64encode(blob).decode("ascii").rstrip("="))
    return "~".join(parts)


def _num(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


class PromptStore:
    """Long prompts kept on the server under a short id, so their links stay short (bounded, newest kept).

    The store lives in this server process: a link with an id opens on this server until it restarts.
    """

    def __init__(self, limit: int = 2000):
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.limit = limit

    def keep(self, text: str) -> str:
        pid = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        with self._lock:
            self._texts[pid] = text
            self._texts.move_to_end(pid)
            while len(self._texts) > self.limit:
                self._texts.popitem(last=False)
        return pid

    def get(self, pid: str) -> str | None:
        with self._lock:
            return self._texts.get(pid)


@st.cache_resource
def prompt_store() -> PromptStore:
    """One store per server process, shared by every tab."""
    return PromptStore()


# ---------------------------------------------------------------- in the app
def read_on_load(state: MutableMapping, query: Mapping) -> list[str]:
    """Before the sidebar is drawn: a link not yet applied becomes a pending replay; returns the messages.

    A link is applied once: what the app writes into the URL itself is remembered (``keys.LINK_SEEN``),
    so only a link that differs from it (a pasted link, a reload, the browser's back button) is replayed.
    """
    params = values(query)
    notes: list[str] = []
    others = tuple(sorted((k, tuple(v)) for k, v in params.items() if k not in RECIPE_PARAMS))
    if others and others != state.get(keys.LINK_OTHERS_SEEN):  # their messages show once per link
        state[keys.LINK_OTHERS_SEEN] = others
        notes += _check_others(params)
    mine = _own(params)
    if mine and mine != state.get(keys.LINK_SEEN):
        state[keys.LINK_SEEN] = mine
        link, recipe_notes = _read_recipe(params)
        notes += recipe_notes
        if link is not None:
            state[keys.LINK_PENDING] = ("link", link)
    return notes


def _own(params: dict[str, list[str]]) -> tuple:
    return tuple((name, tuple(params[name])) for name in RECIPE_PARAMS if name in params)


def replay_pending(bundle, state: MutableMapping) -> None:
    """Replay a pending link or session file here, with a progress bar; a bad one gets a message.

    The pending replay is dropped only once its session is kept: a rerun that interrupts it (a click,
    the page settling its URL) raises out of a progress update, and the next run replays it again.
    """
    pending = state.get(keys.LINK_PENDING)
    if pending is None or bundle is None:
        return
    kind, payload = pending
    bar = st.progress(0.0, text="Rebuilding the session…")
    try:
        if kind == "file":
            total = len(payload.get("steps", [])) if isinstance(payload, dict) else 0
            session = import_session(bundle, payload, on_step=_progress(bar, total, "the file"))
        else:
            recipe = _link_recipe(bundle, payload, state)
            session = replay(bundle, recipe, on_step=_progress(bar, recipe.steps, "the link"))
    except ReplayError as exc:
        state.pop(keys.LINK_PENDING, None)
        bar.empty()
        st.error(messages.plain(f"{exc} The link was not replayed." if kind == "link" else str(exc)))
        return
    state[keys.SESSION] = session
    state[keys.PROMPT_KEPT] = state[keys.PROMPT_BOX] = session.prompt
    state[keys.CHAT_KEPT] = state[keys.CHAT_BOX] = session.chat
    state.pop(keys.LINK_PENDING, None)
    bar.empty()
    where = "the session file" if kind == "file" else "the link"
    st.success(f"Rebuilt from {where}: the prompt and {len(session.records)} steps, replayed exactly.")


def _link_recipe(bundle, link: Link, state: MutableMapping) -> Recipe:
    from .state import DEFAULT_PROMPT

    prompt = link.prompt
    if link.prompt_id is not None:
        prompt = prompt_store().get(link.prompt_id)
        if prompt is None:
            raise ReplayError("The link names a long prompt kept on the server that made it; this server does not "
                              "have it (it restarted, or the link came from another server). Ask for the session "
                              "file instead.")
    current = state.get(keys.CONFIG) or SIDEBAR_DEFAULTS
    return recipe_of_link(link, prompt if prompt is not None else DEFAULT_PROMPT, current, bundle.spec.vocab)


def _progress(bar, total: int, source: str) -> Callable:
    def on_step(record) -> None:
        bar.progress(min(1.0, record.index / max(total, 1)), text=f"Replaying {source}: step {record.index} of {total}")
    return on_step


def sync_url(state: MutableMapping | None = None, query: MutableMapping | None = None) -> None:
    """Write this tab's state into the URL (only the parameters the app owns; bound widgets write themselves)."""
    from autoreg_core import allowed_models

    from .state import DEFAULT_PROMPT, current_config, current_session

    state = st.session_state if state is None else state
    query = st.query_params if query is None else query
    session, config = current_session(), current_config()
    wanted: dict[str, str | list[str]] = {}
    if session is not None:
        wanted = recipe_params(recipe_of(session, config), config, DEFAULT_PROMPT, prompt_store().keep)
    models = allowed_models()
    if state.get(keys.MODEL) not in (None, models[0]):
        wanted["model"] = str(state[keys.MODEL])
    if state.get(keys.PRESENT):
        wanted[PRESENT] = "1"
    params = values(query)
    for name in params:
        if not _known(name):
            del query[name]  # said once when the link was opened; the URL keeps only what it means
    for name in RECIPE_PARAMS + ("model", PRESENT):
        want = wanted.get(name)
        want_list = None if want is None else ([want] if isinstance(want, str) else list(want))
        if params.get(name) != want_list:
            if want is None:
                del query[name]
            else:
                query[name] = want
    state[keys.LINK_SEEN] = _own({k: ([v] if isinstance(v, str) else list(v)) for k, v in wanted.items()})


COPY_LINK_HTML = """
<div class="autoreg-copy"><button type="button" id="autoreg-copy-link">Copy link</button>
<span id="autoreg-copy-done" aria-live="polite"></span></div>
<style>.autoreg-copy button{border:1px solid rgba(128,128,128,.5);border-radius:.5rem;padding:.3rem .8rem;
background:transparent;color:inherit;font:inherit;cursor:pointer}
.autoreg-copy span{margin-left:.5rem;opacity:.8}</style>
<script>
(function () {
  const button = document.getElementById("autoreg-copy-link");
  if (!button || button.dataset.ready) return;
  button.dataset.ready = "1";
  button.addEventListener("click", async function () {
    const kept = window.location.search.replace(/^\?/, "").split("&")  // as written: no re-encoding of ~
      .filter(part => part && !/^(present|embed_options)=/.test(part));
    const text = window.location.origin + window.location.pathname + (kept.length ? "?" + kept.join("&") : "");
    let done = false;
    try { await navigator.clipboard.writeText(text); done = true; } catch (e) {
      const area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      try { done = document.execCommand("copy"); } catch (e2) { done = false; }
      area.remove();
    }
    document.getElementById("autoreg-copy-done").textContent = done ? "Copied." : "Copy the address bar instead.";
  });
})();
</script>
"""


def copy_link_button() -> None:
    """A button that copies the page's current URL (which always holds the state) without presenter mode."""
    st.html(COPY_LINK_HTML, unsafe_allow_javascript=True)
