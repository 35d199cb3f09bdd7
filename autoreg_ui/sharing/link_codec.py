"""The link codec: a URL's parameters ⇄ what they rebuild (prompt, chat mode, steps, forced tokens,
settings per stretch of steps, seed), parsed and written side by side. Pure: no Streamlit, no state;
the query is a plain mapping, so tests pass dicts. Nothing here runs or renders what a link holds:
values are parsed as numbers, ids and words, and a message quotes at most a short, defanged excerpt.
"""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import quote_plus

from autoreg_core import SamplingConfig
from autoreg_core.engine.replay import MAX_STEPS, Recipe, Segment
from autoreg_ui import keys
from autoreg_ui.settings import SETTINGS, SIDEBAR_DEFAULTS, STOPS_CODE, Setting, number_text
from autoreg_ui.sharing import link_params

MEAN = -1  # the head "index" of the mean over all heads


MEAN_WORDS = ("mean", "avg", "average")


_UNSHOWN = re.compile(r"[^A-Za-z0-9./\-]")  # characters of a link value a message never echoes


def echo(text: str, limit: int = 16) -> str:
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
        return None, f"The {name} {echo(text)} in the link is not a whole number{mean_hint}; it was ignored."
    value = int(text)
    if not 0 <= value < n:
        return None, (f"The {name} {value} in the link does not exist: this model has {name}s 0–{n - 1}"
                      f"{mean_hint}; it was ignored.")
    return value, None


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
#   ids       every step's token id joined by '.', written when a step shared its forward pass with other
#             tabs (a shared pass's logits differ from a solo pass's in the last bits): the replay keeps them
#   present   1 = presenter mode;  model, layer, head: as before
PROMPT, PROMPT_ID, CHAT, STEPS, FORCED, SEGMENT, RUN_SEED, PRESENT, TOKENS = (
    "prompt", "pid", "chat", "steps", "forced", "seg", "run_seed", "present", "ids")


RECIPE_PARAMS = (PROMPT, PROMPT_ID, CHAT, STEPS, FORCED, SEGMENT, RUN_SEED, TOKENS)


# class mode: class_mode.py; a page's own parameters (?layer=&head=) are declared by its lesson: link_params.py
OTHER_PARAMS = ("model", "view", PRESENT, "class", "key", "seat")


MAX_LINK_PROMPT = 2000  # characters of a prompt read from a link; longer ones travel as a pid


MAX_URL_PROMPT = 1500  # URL-encoded characters a prompt may take before it is kept on the server


MAX_LINK_STEPS = MAX_STEPS


MAX_SEGMENTS = 64


MAX_VALUE = 32_000  # characters of any other link value (2,048 forced tokens fit)


TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


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
    tokens: tuple[int, ...] = ()  # every step's token id, when the link lists them
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
    raise LinkError(f"The link's {name} {echo(raw or '')} is not 1 or 0.")


def read(query: Mapping) -> tuple[Link | None, list[str]]:
    """The link's recipe (None when it carries none, or no usable prompt) and one message per bad part.

    Nothing here runs or renders what the link holds: values are parsed as numbers, ids and words, and
    a message quotes at most a short, defanged excerpt.
    """
    params = values(query)
    link, notes = read_recipe(params)
    return link, check_others(params) + notes


def read_recipe(params: dict[str, list[str]]) -> tuple[Link | None, list[str]]:
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
        tokens = _tokens(one.get(TOKENS, ""), steps)
    except LinkError as exc:
        return base, notes + [f"{exc} Only the prompt was taken from the link; its steps were not replayed."]
    return replace(base, steps=steps, forced=forced, segments=segments, run_seed=run_seed, tokens=tokens), notes


def _tokens(text: str, steps: int) -> tuple[int, ...]:
    """'12.7042.13' → (12, 7042, 13): one id per step, or nothing."""
    if text.strip() == "":
        return ()
    if not re.fullmatch(r"\d{1,9}(\.\d{1,9}){0,4095}", text.strip()):
        raise LinkError(f"The link's token ids {echo(text)} are not whole numbers joined by dots.")
    tokens = tuple(int(part) for part in text.strip().split("."))
    if len(tokens) != steps:
        raise LinkError(f"The link lists {len(tokens)} token ids for its {steps} steps.")
    return tokens


def check_others(params: dict[str, list[str]]) -> list[str]:
    """Messages for unknown parameters and for sidebar settings Streamlit will not take (it drops them)."""
    notes = []
    unknown = sorted(name for name in params if not is_known(name))
    if unknown:
        shown = ", ".join(echo(name) for name in unknown[:5]) + (" …" if len(unknown) > 5 else "")
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


EMBED_PARAMS = ("embed", "embed_options")  # Streamlit's own parameters for the page's look (presenter mode's theme)


def is_known(name: str) -> bool:
    """A parameter this app reads (or Streamlit's own embed options, which it reads itself)."""
    return name in KNOWN_PARAMS or name in link_params.names() or name.lower() in EMBED_PARAMS


def _prompt(one: dict[str, str]) -> tuple[str | None, str | None]:
    if PROMPT_ID in one:
        pid = one[PROMPT_ID].strip().lower()
        if not re.fullmatch(r"[0-9a-f]{12}", pid):
            raise LinkError(f"The link's prompt id {echo(one[PROMPT_ID])} is not an id this app makes.")
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
        raise LinkError(f"The link's {name} {echo(text)} is not a whole number.")
    value = int(text)
    if not low <= value <= high:
        raise LinkError(f"The link's {name} {value} is outside {low}–{high}.")
    return value


def _number(text: str, setting: Setting) -> int | float:
    """A setting's value as the sidebar widget takes it, or an error saying why not."""
    if setting.kind is int:
        return _whole(text, setting.name, int(setting.low), int(setting.high))
    if not re.fullmatch(r"\s*[+-]?(\d{1,6}(\.\d{0,12})?|\.\d{1,12})([eE][+-]?\d{1,3})?\s*", text):
        raise LinkError(f"The link's {setting.name} {echo(text)} is not a number.")
    value = float(text)
    if not setting.low <= value <= setting.high:
        raise LinkError(f"The link's {setting.name} {value:g} is outside {setting.low:g}–{setting.high:g}.")
    return value


def _forced(text: str, steps: int) -> dict[int, int]:
    """'3-1234.7-42' → {3: 1234, 7: 42}; every step must be one the link runs."""
    if text.strip() == "":
        return {}
    if not re.fullmatch(r"\d{1,4}-\d{1,9}(\.\d{1,4}-\d{1,9}){0,2047}", text.strip()):
        raise LinkError(f"The link's forced tokens {echo(text)} are not STEP-TOKEN pairs joined by dots.")
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
            raise LinkError(f"The link's settings segment {echo(text)} does not start with a step number.")
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
                raise LinkError(f"The link's settings segment has an unknown setting {echo(part)}.")
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
                  forced=dict(link.forced), tokens=tuple(link.tokens))


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
    if recipe.tokens:
        out[TOKENS] = ".".join(map(str, recipe.tokens))
    return out


def segment_text(segment: Segment) -> str:
    """START~t0.3~k20…: the settings of the segment that differ from the sidebar's defaults."""
    parts = [str(segment.start)]
    for setting in SETTINGS:
        value = getattr(segment.config, setting.field)
        if setting.code and value != getattr(SIDEBAR_DEFAULTS, setting.field):
            parts.append(setting.code + number_text(value))
    if segment.config.stop_sequences:
        blob = json.dumps(list(segment.config.stop_sequences), ensure_ascii=False).encode("utf-8")
        parts.append(STOPS_CODE + base64.urlsafe_b64encode(blob).decode("ascii").rstrip("="))
    return "~".join(parts)


def view_slug(label: str) -> str:
    """A view's name in a link: its tab label without its number, lower case, words joined by '-'
    ("5 · Memory calculator" → "memory-calculator")."""
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"^\d+\s*·\s*", "", label).lower()).strip("-")
