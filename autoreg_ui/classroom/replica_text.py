"""The teacher's text on a replica that does not hold the teacher's tab: rebuilt from the class's recipe once
per replica, then kept in step as the teacher acts.

A class's recipe (``autoreg_core.engine.replay``) rebuilds the teacher's session exactly. This process holds one live
``Session`` per class (the last ``KEPT`` classes read here). When the class's recipe changes:

- the same recipe: the held snapshot, nothing computed;
- a recipe that extends the held one (same prompt, chat mode and seed, the same settings, forced tokens and
  listed tokens for every step already held, more steps): only the new steps run on the held session, exactly
  as ``replay`` would run them (same settings, forced and expected tokens), so the text is a full replay's,
  token for token, at the cost of the new steps;
- anything else (reset, undo, a new prompt, other settings for a held step, another model): one full replay.

One rebuild at a time per class (the others wait and take its result). No Streamlit here: ``live`` calls it.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from autoreg_core.engine.passes import PrefillCache, StepPass
from autoreg_core.engine.replay import Recipe, ReplayError, check, recipe_from_dict, replay
from autoreg_core.engine.session import Session, SessionError, SessionSnapshot

KEPT = 16  # classes whose teacher's text this process keeps live (each holds one KV cache)
HELD, EXTENDED, REPLAYED = "held", "extended", "replayed"


@dataclass
class _Held:
    recipe_dict: dict
    recipe: Recipe
    session: Session
    snapshot: SessionSnapshot


def extends(old: Recipe, new: Recipe) -> bool:
    """Whether ``new`` is ``old`` with more steps: every step ``old`` ran, ``new`` runs the same way."""
    if (new.prompt, new.chat, new.seed) != (old.prompt, old.chat, old.seed) or new.steps < old.steps:
        return False
    if old.steps and any(new.config_at(step) != old.config_at(step) for step in range(1, old.steps + 1)):
        return False
    if {s: t for s, t in new.forced.items() if s <= old.steps} != old.forced:
        return False
    if old.tokens and tuple(new.tokens[:old.steps]) != old.tokens:
        return False
    return True


def _step(session: Session, recipe: Recipe, step: int) -> None:
    """Step ``step`` of ``recipe``, run as ``replay`` runs it."""
    config = replace(recipe.config_at(step), seed=recipe.seed)
    try:
        session.step(config, force_token=recipe.forced.get(step),
                     expect_token=recipe.tokens[step - 1] if recipe.tokens else None)
    except SessionError as exc:
        raise ReplayError(f"Step {step} could not be replayed: {exc}") from exc


def _ready(session: Session, recipe: Recipe) -> SessionSnapshot:
    session.next_pipeline(recipe.config_at(max(1, len(session.records))))  # the logits guesses need
    return session.snapshot()


class ReplicaTexts:
    """The teacher's text of every class this process serves without the teacher's tab."""

    def __init__(self, kept: int = KEPT):
        self.kept = kept
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self.counts = {HELD: 0, EXTENDED: 0, REPLAYED: 0}

    def _get(self, code: str) -> _Held | None:
        with self._lock:
            return self._held.get(code)

    def snapshot(self, bundle, code: str, recipe_dict: dict, *, step_pass: StepPass | None = None,
                 prefill_cache: PrefillCache | None = None) -> tuple[SessionSnapshot, str]:
        """The teacher's text at ``recipe_dict`` and how it was had (``held``, ``extended`` or ``replayed``); a
        replay's session runs on ``step_pass`` and ``prefill_cache`` (the server's runtime, see ``Session``).
        Raises ``ReplayError`` (or ``SessionError``, ``ValueError``) for a recipe that cannot be replayed."""
        held = self._get(code)
        if held is not None and held.recipe_dict == recipe_dict and held.session.bundle is bundle:
            return held.snapshot, self._count(HELD)
        with self._lock:
            building = self._building.setdefault(code, threading.Lock())
        with building:
            held = self._get(code)
            if held is not None and held.recipe_dict == recipe_dict and held.session.bundle is bundle:
                return held.snapshot, self._count(HELD)
            recipe = recipe_from_dict(recipe_dict)
            check(recipe, bundle.spec.vocab)
            if held is not None and held.session.bundle is bundle and extends(held.recipe, recipe) and (
                    not recipe.tokens or list(recipe.tokens[:held.recipe.steps]) == held.session.generated_ids):
                self._forget(code)  # a step that fails leaves no half-extended session behind
                for step in range(held.recipe.steps + 1, recipe.steps + 1):
                    _step(held.session, recipe, step)
                session, how = held.session, EXTENDED
            else:
                self._forget(code)
                session, how = replay(bundle, recipe, step_pass=step_pass, prefill_cache=prefill_cache), REPLAYED
            snapshot = _ready(session, recipe)
            with self._lock:
                self._held[code] = _Held(dict(recipe_dict), recipe, session, snapshot)
                self._held.move_to_end(code)
                while len(self._held) > self.kept:
                    self._held.popitem(last=False)
            return snapshot, self._count(how)

    def _count(self, how: str) -> str:
        with self._lock:
            self.counts[how] += 1
        return how

    def _forget(self, code: str) -> None:
        with self._lock:
            self._held.pop(code, None)

    def forget(self, code: str) -> None:
        """A class that ended: its text goes."""
        self._forget(code)
        with self._lock:
            self._building.pop(code, None)


_texts = ReplicaTexts()


def texts() -> ReplicaTexts:
    """This process's teacher's texts (one per class)."""
    return _texts
