"""A session as a recipe that rebuilds it exactly: prompt, chat mode, settings, steps, forced tokens.

A session replays exactly (the same seed and settings give the same tokens, as ``generate`` does), so
what it takes to rebuild one is small: the prompt, chat mode, the seed, how many steps ran under
which settings, and which steps were forced to which token. Links and exported files carry a
``Recipe``; ``replay`` turns it back into a ``Session`` and says clearly what was wrong with a bad one.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace

from autoreg_core.engine.config import MAX_NEW_TOKENS_CAP, SamplingConfig
from autoreg_core.engine.passes import PrefillCache, StepPass
from autoreg_core.engine.session import Session, SessionError, SessionSnapshot, StepRecord

FORMAT = "autoreg-session/1"
MAX_PROMPT_CHARS = 20_000
MAX_STEPS = MAX_NEW_TOKENS_CAP
_CONFIG_FIELDS = {f.name: f.type for f in fields(SamplingConfig)}


class ReplayError(ValueError):
    """A recipe that cannot be replayed; the message is meant for the page."""


@dataclass(frozen=True)
class Segment:
    """From step ``start`` (1-based) on, steps ran under ``config``."""

    start: int
    config: SamplingConfig


@dataclass(frozen=True)
class Recipe:
    prompt: str
    chat: bool
    seed: int
    steps: int
    segments: tuple[Segment, ...]  # sorted by start; the first starts at 1 (when steps > 0)
    forced: dict[int, int] = field(default_factory=dict)  # step → token id
    # every step's token, kept when some step shared a forward pass with other tabs: a shared pass's logits
    # differ from a solo pass's in the last bits, so a near-tie could tip the other way on replay
    tokens: tuple[int, ...] = ()

    def config_at(self, step: int) -> SamplingConfig:
        return [s.config for s in self.segments if s.start <= step][-1]


def recipe_of(session: Session | SessionSnapshot, config: SamplingConfig | None = None) -> Recipe:
    """What rebuilds ``session`` (read from one snapshot); with no steps yet, ``config`` (the current
    settings) is the one segment."""
    session = session.snapshot() if isinstance(session, Session) else session
    records = session.records
    segments: list[Segment] = []
    for rec in records:
        if not segments or segments[-1].config != rec.config:
            segments.append(Segment(rec.index, rec.config))
    if not segments and config is not None:
        segments.append(Segment(1, config))
    seed = session.seed if session.seed is not None else (segments[0].config.seed if segments else 0)
    shared = any(r.pass_rows > 1 for r in records)
    return Recipe(prompt=session.prompt, chat=session.chat, seed=int(seed), steps=len(records),
                  segments=tuple(segments), forced={r.index: r.token_id for r in records if r.forced},
                  tokens=tuple(r.token_id for r in records) if shared else ())


def replay(bundle, recipe: Recipe, on_step: Callable[[StepRecord], None] | None = None,
           should_stop: Callable[[], bool] | None = None, *, step_pass: StepPass | None = None,
           prefill_cache: PrefillCache | None = None) -> Session:
    """A new session that took the recipe's steps; stops early (keeping what ran) on ``should_stop``.

    ``step_pass`` and ``prefill_cache`` are the new session's (see ``Session``): solo and unshared by default."""
    check(recipe, bundle.spec.vocab)
    try:
        session = Session(bundle, recipe.prompt, chat=recipe.chat, step_pass=step_pass, prefill_cache=prefill_cache)
    except SessionError as exc:
        raise ReplayError(f"The prompt cannot be used: {exc}") from exc
    for step in range(1, recipe.steps + 1):
        if should_stop is not None and should_stop():
            break
        config = replace(recipe.config_at(step), seed=recipe.seed)
        try:
            rec = session.step(config, force_token=recipe.forced.get(step),
                               expect_token=recipe.tokens[step - 1] if recipe.tokens else None)
        except SessionError as exc:
            raise ReplayError(f"Step {step} could not be replayed: {exc}") from exc
        if on_step is not None:
            on_step(rec)
    return session


def check(recipe: Recipe, vocab_size: int) -> None:
    """Refuse what a link or file must not ask for, with a message that says what was wrong."""
    if not isinstance(recipe.prompt, str) or not recipe.prompt.strip():
        raise ReplayError("The recipe has no prompt.")
    if len(recipe.prompt) > MAX_PROMPT_CHARS:
        raise ReplayError(f"The prompt is {len(recipe.prompt):,} characters; "
                          f"at most {MAX_PROMPT_CHARS:,} are accepted.")
    if not 0 <= recipe.steps <= MAX_STEPS:
        raise ReplayError(f"The number of steps must lie between 0 and {MAX_STEPS}; got {recipe.steps}.")
    if recipe.steps and (not recipe.segments or recipe.segments[0].start != 1):
        raise ReplayError("The settings of the first step are missing.")
    if recipe.tokens and len(recipe.tokens) != recipe.steps:
        raise ReplayError(f"The recipe lists {len(recipe.tokens)} tokens for {recipe.steps} steps.")
    if any(not 0 <= t < vocab_size for t in recipe.tokens):
        raise ReplayError(f"The recipe lists a token that is not a token of this model (ids 0–{vocab_size - 1}).")
    for step, token in recipe.forced.items():
        if not 1 <= step <= recipe.steps:
            raise ReplayError(f"A token is forced at step {step}, but the recipe has {recipe.steps} steps.")
        if not 0 <= token < vocab_size:
            raise ReplayError(f"The token forced at step {step} (id {token}) is not a token of this model "
                              f"(ids 0–{vocab_size - 1}).")


# ---------------------------------------------------------------- plain data (JSON files, links)
def config_to_dict(config: SamplingConfig) -> dict:
    d = asdict(config)
    d["stop_sequences"] = list(config.stop_sequences)
    return d


def config_from_dict(data: dict) -> SamplingConfig:
    """Known fields only, each converted to its type; anything else is an error, not ignored silently."""
    if not isinstance(data, dict):
        raise ReplayError("Settings must be a mapping of names to values.")
    unknown = sorted(set(data) - set(_CONFIG_FIELDS))
    if unknown:
        raise ReplayError(f"Unknown setting(s): {', '.join(map(str, unknown))}.")
    try:
        values = {k: _convert(k, v) for k, v in data.items()}
        return SamplingConfig(**values)
    except (TypeError, ValueError) as exc:
        raise ReplayError(f"A setting has a value of the wrong kind: {exc}") from exc


def _convert(name: str, value):
    if name == "stop_sequences":
        if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
            raise ValueError("stop_sequences must be a list of strings")
        return tuple(value)
    kind = int if name in ("top_k", "seed", "max_new_tokens") else float
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{name} must be a number")
    return kind(value)


def recipe_to_dict(recipe: Recipe) -> dict:
    return {"prompt": recipe.prompt, "chat": recipe.chat, "seed": recipe.seed, "steps": recipe.steps,
            "segments": [{"start": s.start, "config": config_to_dict(s.config)} for s in recipe.segments],
            "forced": {str(k): v for k, v in sorted(recipe.forced.items())}} | (
                {"tokens": list(recipe.tokens)} if recipe.tokens else {})


def recipe_from_dict(data: dict) -> Recipe:
    if not isinstance(data, dict):
        raise ReplayError("A session recipe must be a JSON object.")
    try:
        segments = tuple(Segment(int(s["start"]), config_from_dict(s["config"])) for s in data.get("segments", []))
        forced = {int(k): int(v) for k, v in dict(data.get("forced", {})).items()}
        return Recipe(prompt=str(data["prompt"]), chat=bool(data.get("chat", False)), seed=int(data.get("seed", 0)),
                      steps=int(data.get("steps", 0)), segments=tuple(sorted(segments, key=lambda s: s.start)),
                      forced=forced, tokens=tuple(int(t) for t in data.get("tokens", ())))
    except ReplayError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"The session recipe is malformed: {exc!s}") from exc


def export_session(session: Session | SessionSnapshot, config: SamplingConfig | None = None) -> dict:
    """The recipe plus every step's numbers: a file that rebuilds the session and documents it.

    Steps and recipe come from one snapshot, so a step taken meanwhile cannot split the file in two."""
    session = session.snapshot() if isinstance(session, Session) else session
    records = session.records
    to_token = session.bundle.tokenizer.convert_ids_to_tokens
    steps = [{"step": r.index, "token_id": r.token_id, "token": to_token(r.token_id),
              "forced": r.forced, "prob": r.prob, "prob_filtered": r.prob_filtered, "rank": r.rank,
              "logprob": r.logprob, "entropy_bits": r.entropy_bits, "kept": r.kept,
              "time_ms": r.time_ms, "forward_ms": r.forward_ms} for r in records]
    return {"format": FORMAT, "model": session.bundle.name, "recipe": recipe_to_dict(recipe_of(session, config)),
            "steps": steps}


def import_session(bundle, data: dict, on_step: Callable[[StepRecord], None] | None = None, *,
                   step_pass: StepPass | None = None, prefill_cache: PrefillCache | None = None) -> Session:
    """Rebuild an exported session and check that it came out with the same tokens (``replay``'s passes)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError(f"This is not an autoreg session file (expected format {FORMAT!r}).")
    if data.get("model") != bundle.name:
        raise ReplayError(f"The file was made with {data.get('model')!r}; the loaded model is {bundle.name!r}.")
    session = replay(bundle, recipe_from_dict(data.get("recipe")), on_step=on_step, step_pass=step_pass,
                     prefill_cache=prefill_cache)
    expected = [int(s["token_id"]) for s in data.get("steps", [])]
    if session.generated_ids != expected:
        raise ReplayError("Replaying the file gave different tokens than it records; it was edited or made "
                          "with other settings.")
    return session
