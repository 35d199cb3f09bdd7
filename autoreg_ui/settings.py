"""The sidebar's settings in one table: widget key (= URL parameter), config field, code in a link's
``seg``, type and range, and the defaults. Read by the sidebar, the link codec and the exports."""
from __future__ import annotations

from dataclasses import dataclass

from autoreg_core import SamplingConfig
from autoreg_core.engine.config import MAX_NEW_TOKENS_CAP
from autoreg_ui import keys


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


def settings_params(config: SamplingConfig) -> dict[str, str]:
    """The sidebar's settings as its bound widgets put them in the URL (a default value is left out)."""
    out = {s.key: number_text(getattr(config, s.field)) for s in SETTINGS
           if getattr(config, s.field) != getattr(SIDEBAR_DEFAULTS, s.field)}
    if config.stop_sequences:
        out[keys.CFG_STOPS] = stops_text(config.stop_sequences)
    return out


def stops_text(stops: tuple[str, ...]) -> str:
    """Stop sequences as the sidebar's text box holds them: one per line, newlines and tabs written \\n, \\t."""
    return "\n".join(stop.replace("\n", "\\n").replace("\t", "\\t") for stop in stops)


def number_text(value: float) -> str:
    """A setting's value as the URL writes it: 2.0 → '2', 0.95 → '0.95'."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)
