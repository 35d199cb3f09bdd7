"""The operator's settings: every ``AUTOREG_*`` environment variable, read and checked once per process.

A server is configured by its environment (a container recipe, a compose file, a shell). Each variable is one
field of ``Settings`` below, with its default, what it does, its unit and what it accepts: the operators' table
(``docs/settings.md``) is generated from these fields (``python -m autoreg_server.settings --markdown``).

Two kinds of bad value: most settings keep their default when a value cannot be read or is out of range (a
typo in one tuning knob should not keep a class from starting); the few whose wrong value the server cannot
run well without (``strict`` below) stop the start with one ``ValueError`` naming each variable and what it
accepts.

``current()`` is the process's one instance, read on first use. Nothing else reads these variables: the
engine takes every value as an argument (a notebook passes its own or keeps the defaults), and the app hands
it these.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autoreg_server.once import Once

PREFIX = "AUTOREG_"


def setting(variable: str, default: Any, what: str, accepts: str, parse: Callable[[str], Any], *,
            unit: str = "", strict: bool = False, shown_default: str | None = None):
    """One field of ``Settings``: the variable it is read from and how (``parse`` raises ``ValueError`` with
    what is allowed), what it does, its unit, what it accepts. A ``strict`` setting's bad value stops the start;
    any other keeps the default."""
    return field(default=default, metadata={
        "variable": variable, "what": what, "accepts": accepts, "parse": parse, "unit": unit, "strict": strict,
        "shown_default": shown_default,
    })


# ---------------------------------------------------------------- parsers (a ValueError says what is allowed)
def number(kind: type, low: float | None = None, high: float | None = None, unit: str = "",
           above: float | None = None) -> Callable[[str], Any]:
    """A ``kind`` (int or float) from ``low`` to ``high`` (inclusive, either may be open), or more than ``above``."""
    noun = ("a whole number" if kind is int else "a number") + (f" of {unit}" if unit else "")

    def parse(raw: str):
        try:
            value = kind(raw)
        except ValueError:
            raise ValueError(f"must be {noun}") from None
        if above is not None and value <= above:
            raise ValueError(f"must be > {above:g}")
        if low is not None and value < low:
            raise ValueError(f"must be ≥ {low:g}")
        if high is not None and value > high:
            raise ValueError(f"must be ≤ {high:g}")
        return value

    return parse


def switch(raw: str) -> bool:
    """On unless the value is 0, false, no or off."""
    return raw.strip().lower() not in ("0", "false", "no", "off")


def text(raw: str) -> str:
    return raw.strip()


def names(raw: str) -> tuple[str, ...]:
    """A comma-separated list, blanks dropped, order kept."""
    return tuple(part.strip() for part in raw.split(",") if part.strip())


# The characters of a class code (no 0/O, 1/I/L look-alikes); a replica's tag is one of them. Defined here, where
# the tag is validated, and read by the class store's codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def replica_tag(raw: str) -> str:
    """The value's first character, upper case, if it is one a class code may start with."""
    tag = raw.strip().upper()[:1]
    if tag not in CODE_ALPHABET:
        raise ValueError(f"must be one of {CODE_ALPHABET}")
    return tag


# ---------------------------------------------------------------- the settings
@dataclass(frozen=True)
class Settings:
    """One server's settings; ``Settings()`` is every default (what a notebook or a test starts from)."""

    # -- the models
    allowed_models: tuple[str, ...] = setting(
        "AUTOREG_ALLOWED_MODELS", (), "Hugging Face ids or local folders offered besides the embedded model",
        "comma-separated names", names, shown_default="(none)")
    models_file: str = setting(
        "AUTOREG_MODELS_FILE", "", "a file naming more models, same meaning as the allowlist",
        "a path: a JSON list, or one model per line (# starts a comment)", text, shown_default="(none)")
    cache_dir: str = setting(
        "AUTOREG_CACHE_DIR", "", "where the converted model copy (and the class file by default) goes",
        "a folder", text, shown_default="the user cache dir, e.g. ~/.cache/autoreg")
    device: str = setting(
        "AUTOREG_DEVICE", "", "the device the model runs on", "cpu, cuda, cuda:1, …", text,
        shown_default="cuda when present, else cpu")
    dtype: str = setting(
        "AUTOREG_DTYPE", "", "the model's dtype", "float32, float16, bfloat16", text,
        shown_default="float32 on CPU; bfloat16 (else float16) on a GPU")
    max_models: int = setting(
        "AUTOREG_MAX_MODELS", 2, "models kept loaded at once (the least recently used goes)",
        "a whole number (below 1 counts as 1)", number(int), unit="models", strict=True)

    # -- passes on the server's cores
    torch_threads: int = setting(
        "AUTOREG_TORCH_THREADS", 1, "intra-op threads for one forward pass", "a whole number ≥ 1",
        number(int, 1), unit="threads")
    forward_slots: int | None = setting(
        "AUTOREG_FORWARD_SLOTS", None, "forward passes allowed at once, the others wait asleep",
        "a whole number ≥ 0 (0 = no limit)", number(int, 0), unit="passes", shown_default="cores ÷ threads")
    batch: bool = setting(
        "AUTOREG_BATCH", True, "cross-tab batching: decode steps asked for together run as one forward pass",
        "1 or 0 (false, no, off)", switch)
    batch_workers: int = setting(
        "AUTOREG_BATCH_WORKERS", 0, "batched passes that may run at once", "a whole number ≥ 0 (0 = one per "
        "forward slot)", number(int, 0), unit="passes")
    switch_interval_ms: float = setting(
        "AUTOREG_SWITCH_INTERVAL_MS", 0.0, "Python's thread switch interval once a batch worker starts",
        "a number ≥ 0 (0 = Python's own, 5 ms)", number(float, 0), unit="ms")
    prefix_cache_mb: float = setting(
        "AUTOREG_PREFIX_CACHE_MB", 64.0, "memory for prompts' prefills shared between tabs (least recently "
        "used go first)", "a number ≥ 0 (0 = off)", number(float, 0, unit="MiB"), unit="MiB", strict=True)

    # -- seats and per-tab caps
    max_sessions: int = setting(
        "AUTOREG_MAX_SESSIONS", 30, "seats: browser tabs served at once", "a whole number ≥ 0 (0 = no cap)",
        number(int, 0), unit="tabs")
    idle_minutes: float = setting(
        "AUTOREG_IDLE_MINUTES", 20.0, "a tab idle this long loses its seat and its generation",
        "a number ≥ 0 (0 = never)", number(float, 0), unit="minutes")
    max_new_tokens: int = setting(
        "AUTOREG_MAX_NEW_TOKENS", 512, "cap on max new tokens and on Generate N, per tab", "a whole number ≥ 1",
        number(int, 1), unit="tokens")
    max_race_length: int = setting(
        "AUTOREG_MAX_RACE_LENGTH", 2048, "longest length of the cost page's naive-vs-cache race, per tab",
        "a whole number ≥ 1", number(int, 1), unit="tokens")

    # -- classes
    class_db: str = setting(
        "AUTOREG_CLASS_DB", "", "where classes are kept", "a SQLite file's path, or postgresql://…", text,
        shown_default="<cache dir>/classes.sqlite3")
    class_hours: float = setting(
        "AUTOREG_CLASS_HOURS", 6.0, "a class expires this long after the teacher's last action", "a number > 0",
        number(float, above=0), unit="hours")
    class_seats: int = setting(
        "AUTOREG_CLASS_SEATS", 60, "students per class", "a whole number from 1 to 1000", number(int, 1, 1000),
        unit="students")
    class_db_pool: int = setting(
        "AUTOREG_CLASS_DB_POOL", 8, "PostgreSQL connections per process at most (plus one listening)",
        "a whole number (below 2 counts as 2)", number(int), unit="connections", strict=True)
    replica_tag: str = setting(
        "AUTOREG_REPLICA_TAG", "", "with replicas: the character this replica's class codes start with",
        "one letter or digit of the class-code alphabet", replica_tag, shown_default="(none)")
    trusted_proxies: tuple[str, ...] = setting(
        "AUTOREG_TRUSTED_PROXIES", (), "the operator's balancers: from these the client's address for the rate "
        "limits is read from X-Forwarded-For", "comma-separated addresses", names, shown_default="(none)")

    # -- the server process
    malloc_trim_s: float = setting(
        "AUTOREG_MALLOC_TRIM_S", 30.0, "freed memory is given back to the system this often (and glibc keeps "
        "2 arenas)", "a number (≤ 0 = off)", number(float, unit="seconds"), unit="seconds", strict=True)
    warm: bool = setting(
        "AUTOREG_WARM", True, "before answering, the server loads the model and rebuilds the open classes",
        "1 or 0 (false, no, off)", switch)

    @property
    def prefix_cache_bytes(self) -> int:
        return int(self.prefix_cache_mb * 2**20)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        """Read every setting from ``environ``; an unset or empty variable keeps its default.

        Raises one ``ValueError`` naming every strict setting whose value is not allowed (and what is).
        """
        values, errors = {}, []
        for f in dataclasses.fields(cls):
            meta = f.metadata
            raw = environ.get(meta["variable"])
            if raw is None or not raw.strip():
                continue
            try:
                values[f.name] = meta["parse"](raw)
            except ValueError as exc:
                if meta["strict"]:
                    errors.append(f"{meta['variable']} {exc}; got {raw!r}.")
        if errors:
            raise ValueError(" ".join(errors))
        return cls(**values)


def variable(name: str) -> str:
    """The environment variable a field is read from (``variable("max_sessions") == "AUTOREG_MAX_SESSIONS"``)."""
    return {f.name: f.metadata["variable"] for f in dataclasses.fields(Settings)}[name]


# ---------------------------------------------------------------- the process's one instance
_current: Once[Settings] = Once(lambda: Settings.from_environ(os.environ))


def current() -> Settings:
    """This process's settings, read from the environment on the first call (thread-safe)."""
    return _current.get()


def reset_for_tests() -> None:
    """Forget the settings read, so the next ``current()`` reads the environment again (a test changed it)."""
    _current.reset()


# ---------------------------------------------------------------- the operators' table
def markdown() -> str:
    """The operators' table, generated from the fields (``docs/settings.md`` holds it)."""
    lines = ["# Operator settings", "",
             "Every setting is an environment variable, read once when the server starts "
             "(`autoreg_server/settings.py`). A value that cannot be read keeps the default, except where "
             "the table says the server refuses to start.", "",
             "| Variable | Default | What it does | Accepts |", "|---|---|---|---|"]
    for f in dataclasses.fields(Settings):
        meta = f.metadata
        default = meta["shown_default"] or _shown(f.default)
        unit = f" {meta['unit']}" if meta["unit"] and meta["shown_default"] is None else ""
        accepts = meta["accepts"] + ("; any other value stops the start" if meta["strict"] else "")
        lines.append(f"| `{meta['variable']}` | {default}{unit} | {meta['what']} | {accepts} |")
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m autoreg_server.settings",
                                     description="Print the operators' table, or this environment's settings.")
    parser.add_argument("--markdown", action="store_true", help="the operators' table (docs/settings.md)")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(), end="")
        return
    for f in dataclasses.fields(Settings):
        print(f"{f.metadata['variable']}={getattr(current(), f.name)!r}")


if __name__ == "__main__":
    main()
