"""What the class store hands out and raises: its errors (each message is meant for the page) and the rows it
reads, as frozen dataclasses (no caller holds a connection or a cursor).
"""
from __future__ import annotations

from dataclasses import dataclass


class ClassError(ValueError):
    """Something a class member asked for that cannot be done; the message is meant for the page."""


class NotTeacher(ClassError):
    """A teacher action without the teacher's key (a forged or replayed request)."""


class RateLimited(ClassError):
    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class ClassInfo:
    code: str
    created: float
    expires: float
    recipe: dict | None  # the teacher's session as a replay recipe (replay.recipe_to_dict), None before a prompt
    version: int  # goes up on every teacher change: a follower redraws when it moves
    names_on: bool
    leaderboard: bool
    open_question: int | None
    activity: int  # goes up on what students send: the teacher's page redraws when it moves
    open_round: int | None  # the sampling round students draw for, None when none is open


@dataclass(frozen=True)
class Student:
    student: str
    nickname: str
    mode: str
    page: str
    seen: float
    removed: bool


@dataclass(frozen=True)
class Guess:
    student: str
    text: str
    token: int  # the first token of the guess (a guess of several tokens is scored by it)
    tokens: int  # how many tokens the guess has
    prob: float  # the model's probability of ``token`` at the question's step
    rank: int
    score: float


@dataclass(frozen=True)
class Question:
    id: int
    step: int  # the teacher's step count when asked: the guess is about token step + 1
    asked: float
    revealed: float | None
    model: dict  # what the model said at reveal (its choice, top tokens), empty before


@dataclass(frozen=True)
class Round:
    """"Everyone sample": each student's tab draws ``tokens`` tokens after ``context`` under ``config``."""
    id: int
    step: int  # the teacher's step count when it started
    tokens: int
    config: dict  # replay.config_to_dict of the settings every draw uses
    context: tuple[int, ...]  # the teacher's whole text (prompt included) as token ids
    created: float
    stop: dict | None = None  # the lesson stop the teacher was on when it started (None: off a path, or stored before)


@dataclass(frozen=True)
class Draw:
    student: str
    tokens: tuple[int, ...]
    seed: int

