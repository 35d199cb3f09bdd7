"""The sampling lab's controller: where its logits come from, its settings, and what it keeps.

The logits are the session's pending logits (they follow each new token) or those of a prompt typed
in the lab, prefilled once and cached for every tab. Settings are read from the widget keys by name;
widget values survive a visit to another page through durable copies. Functions take the state as a
mapping, so tests pass a dict. Nothing here draws: the widgets and result views are in ``view``.
"""
from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, replace

import streamlit as st
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.prefix import Prefix, of_session, prefill
from autoreg_core.engine.session import encode_prompt
from autoreg_core.experiments.beam_search import MAX_BEAM_STEPS, BeamSettings
from autoreg_core.experiments.continuations import ContinuationSet, sample_continuations
from autoreg_core.experiments.sampling_lab import Sweep, default_strategies, temperature_sweep
from autoreg_ui import keys as site_keys
from autoreg_ui import measuring
from autoreg_ui.lessons.sampling import keys
from autoreg_ui.state import remember_widgets

SESSION_SOURCE = "the session's next token"
PROMPT_SOURCE = "a prompt typed here"
PROMPTS_KEPT = 8  # typed prompts whose prefill stays cached (shared by every tab)
SWEEPS_KEPT = 16
BEAM_WIDTHS = (1, 5)
BEAM_STEPS = (1, min(12, MAX_BEAM_STEPS))
CONTINUATION_TOKENS = 60
LAB_SETTINGS = "the lab's settings (section 1)"
SIDEBAR_SETTINGS = "the sidebar's settings"

# Every lab widget whose value is kept across pages.
KEPT_WIDGETS = (
    keys.LAB_SOURCE, keys.LAB_PROMPT, keys.LAB_CHAT, keys.LAB_TEMPERATURE, keys.LAB_TOP_K, keys.LAB_TOP_P,
    keys.LAB_MIN_P, keys.LAB_TOP_N, keys.LAB_SEED, keys.LAB_N, keys.LAB_STRAT_TOP_K, keys.LAB_STRAT_TOP_P,
    keys.LAB_STRAT_MIN_P, keys.LAB_CONT_A, keys.LAB_CONT_B, keys.LAB_CONT_K, keys.LAB_CONT_M,
    keys.LAB_BEAM_WIDTH, keys.LAB_BEAM_STEPS, keys.LAB_BEAM_LP,
)


# ---------------------------------------------------------------- widget values across pages
def defaults(sidebar: SamplingConfig, prompt: str, chat: bool) -> dict[str, object]:
    """First values: the sampling sliders start at the sidebar's, the prompt at the step page's."""
    return {
        keys.LAB_SOURCE: SESSION_SOURCE, keys.LAB_PROMPT: prompt, keys.LAB_CHAT: chat,
        keys.LAB_TEMPERATURE: float(sidebar.temperature), keys.LAB_TOP_K: int(sidebar.top_k),
        keys.LAB_TOP_P: float(sidebar.top_p), keys.LAB_MIN_P: float(sidebar.min_p), keys.LAB_TOP_N: 15,
        keys.LAB_SEED: int(sidebar.seed), keys.LAB_N: 1000, keys.LAB_DRAW_COUNT: 0,
        keys.LAB_STRAT_TOP_K: 40, keys.LAB_STRAT_TOP_P: 0.9, keys.LAB_STRAT_MIN_P: 0.05,
        keys.LAB_CONT_A: "greedy", keys.LAB_CONT_B: "temperature 1.5", keys.LAB_CONT_K: 5, keys.LAB_CONT_M: 30,
        keys.LAB_BEAM_WIDTH: 3, keys.LAB_BEAM_STEPS: 8, keys.LAB_BEAM_LP: 1.0,
    }


def remember(state: MutableMapping) -> None:
    """Keep the lab's widget values for the next visit (call after the widgets are drawn)."""
    remember_widgets(state, KEPT_WIDGETS)


def choose_valid(state: MutableMapping, key: str, options: list[str]) -> None:
    """A choice that is no longer offered falls back to the first option."""
    if state.get(key) not in options:
        state[key] = options[0]


# ---------------------------------------------------------------- where the logits come from
@dataclass(frozen=True)
class LabSource:
    kind: str  # SESSION_SOURCE or PROMPT_SOURCE
    prefix: Prefix
    fingerprint: tuple  # changes whenever the logits do: stored results name the one they belong to
    stop_message: str | None = None  # the session stopped here (its logits are still the model's)

    @property
    def logits(self) -> torch.Tensor:
        return self.prefix.logits

    @property
    def ids(self) -> list[int]:
        return list(self.prefix.ids)


def source_options(has_session: bool) -> list[str]:
    return [SESSION_SOURCE, PROMPT_SOURCE] if has_session else [PROMPT_SOURCE]


def session_source(session: Session) -> LabSource:
    """The session's next-token logits (one prefill if the session has none yet)."""
    lent = of_session(session)
    stop = session.records[-1].stop if session.records else None
    return LabSource(SESSION_SOURCE, lent, (SESSION_SOURCE, id(session), session.prompt_len, lent.ids),
                     stop[1] if stop else None)


@st.cache_resource(max_entries=PROMPTS_KEPT, show_spinner="Prefill of the prompt (once)…")
def _prompt_prefix(model_name: str, prompt: str, chat: bool, _bundle) -> Prefix:
    """Read only once made: continuations and beams copy its cache, so every tab can share it."""
    return prefill(_bundle, encode_prompt(_bundle, prompt, chat))


def prompt_source(bundle, prompt: str, chat: bool) -> LabSource:
    """A typed prompt's logits; a bad prompt raises ``SessionError`` with the message to show."""
    encode_prompt(bundle, prompt, chat)  # checks the prompt before anything is cached
    made = _prompt_prefix(bundle.name, prompt, bool(chat), bundle)
    return LabSource(PROMPT_SOURCE, made, (PROMPT_SOURCE, bundle.name, prompt, bool(chat)))


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    return tensor.detach().cpu().numpy().tobytes()


@st.cache_data(max_entries=SWEEPS_KEPT, hash_funcs={torch.Tensor: _tensor_bytes}, show_spinner=False)
def sweep(logits: torch.Tensor) -> Sweep:
    """The temperature sweep of these logits, computed once per set of logits."""
    return temperature_sweep(logits)


# ---------------------------------------------------------------- settings, by name
def sidebar_config(state: MutableMapping) -> SamplingConfig:
    return state.get(site_keys.CONFIG) or SamplingConfig()


def lab_config(state: MutableMapping) -> SamplingConfig:
    """The lab's own sliders; the repetition penalty comes from the sidebar."""
    return SamplingConfig(temperature=float(state[keys.LAB_TEMPERATURE]), top_k=int(state[keys.LAB_TOP_K]),
                          top_p=float(state[keys.LAB_TOP_P]), min_p=float(state[keys.LAB_MIN_P]),
                          repetition_penalty=float(sidebar_config(state).repetition_penalty),
                          seed=int(state[keys.LAB_SEED]))


def copy_sidebar(state: MutableMapping) -> None:
    """Button callback: the lab's sliders take the sidebar's values."""
    cfg = sidebar_config(state)
    state.update({keys.LAB_TEMPERATURE: float(cfg.temperature), keys.LAB_TOP_K: int(cfg.top_k),
                  keys.LAB_TOP_P: float(cfg.top_p), keys.LAB_MIN_P: float(cfg.min_p), keys.LAB_SEED: int(cfg.seed)})
    remember(state)


def redraw(state: MutableMapping) -> None:
    """Button callback: the next draw uses the next seed."""
    state[keys.LAB_DRAW_COUNT] = int(state.get(keys.LAB_DRAW_COUNT, 0)) + 1


def draw_seed(state: MutableMapping) -> int:
    return int(state[keys.LAB_SEED]) + int(state.get(keys.LAB_DRAW_COUNT, 0))


def strategies(state: MutableMapping) -> list[tuple[str, SamplingConfig]]:
    return default_strategies(top_k=int(state[keys.LAB_STRAT_TOP_K]), top_p=float(state[keys.LAB_STRAT_TOP_P]),
                              min_p=float(state[keys.LAB_STRAT_MIN_P]))


def presets(state: MutableMapping) -> dict[str, SamplingConfig]:
    """What the continuations can be sampled with: the seven strategies, the lab's and the sidebar's settings."""
    return {**dict(strategies(state)), LAB_SETTINGS: lab_config(state), SIDEBAR_SETTINGS: sidebar_config(state)}


@dataclass(frozen=True)
class ContinuationRun:
    """What the continuations button runs: two strategies, K continuations of M tokens, one seed."""

    strategy_a: str
    strategy_b: str
    k: int
    m: int
    seed: int


def continuation_run(state: MutableMapping) -> ContinuationRun:
    return ContinuationRun(strategy_a=str(state[keys.LAB_CONT_A]), strategy_b=str(state[keys.LAB_CONT_B]),
                           k=int(state[keys.LAB_CONT_K]), m=int(state[keys.LAB_CONT_M]), seed=int(state[keys.LAB_SEED]))


def run_continuations(bundle, source: LabSource, configs: dict[str, SamplingConfig], run: ContinuationRun,
                      on_step: Callable[[int, int, int], None] | None = None) -> list[ContinuationSet]:
    """Both strategies from the source's prefix, each seeded with the run's seed (``on_step(which, done, m)``)."""
    out = []
    for which, name in enumerate((run.strategy_a, run.strategy_b)):
        report = None if on_step is None else (lambda done, m, which=which: on_step(which, done, m))
        out.append(sample_continuations(bundle, source.prefix, replace(configs[name], seed=run.seed),
                                        k=run.k, m=run.m, name=name, on_step=report))
    return out


def beam_settings(state: MutableMapping) -> BeamSettings:
    return BeamSettings(num_beams=int(state[keys.LAB_BEAM_WIDTH]), max_new_tokens=int(state[keys.LAB_BEAM_STEPS]),
                        length_penalty=float(state[keys.LAB_BEAM_LP]))


def fits(source: LabSource, bundle, new_tokens: int) -> bool:
    """Room in the model's positions for ``new_tokens`` more after the context."""
    return len(source.ids) + int(new_tokens) <= bundle.spec.max_positions


# ---------------------------------------------------------------- results that outlive a rerun
def store(state: MutableMapping, key: str, source: LabSource, settings, result) -> None:
    """Keep a result stamped with the logits it was computed from and the settings it ran with."""
    measuring.keep(state, key, measuring.Kept(source.fingerprint, result, chosen=settings))


def kept_result(state: MutableMapping, key: str, source: LabSource) -> measuring.Kept | None:
    """The section's kept result for these logits (None when there is none yet, or it was made from other logits)."""
    return measuring.kept(state, key, source.fingerprint)
