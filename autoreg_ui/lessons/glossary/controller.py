"""The glossary page: every term by group, and a box that narrows the list to the terms a word finds."""
from __future__ import annotations

from autoreg_ui.glossary_text import GROUPS, Term

MAX_QUERY = 60  # characters of a search kept (a longer paste is cut, and the box says what was searched)


def matches(term: Term, query: str) -> bool:
    """Whether ``query`` (any case, surrounding spaces ignored) is in the term's name or its meaning."""
    needle = query.strip().casefold()
    return not needle or needle in term.name.casefold() or needle in term.meaning.casefold()


def find(query: str, groups: dict[str, tuple[Term, ...]] = GROUPS) -> dict[str, tuple[Term, ...]]:
    """The groups with only the terms ``query`` finds; a group left empty is dropped."""
    query = query[:MAX_QUERY]
    kept = {group: tuple(t for t in terms if matches(t, query)) for group, terms in groups.items()}
    return {group: terms for group, terms in kept.items() if terms}
