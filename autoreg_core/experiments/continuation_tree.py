"""Many continuations of one text merged into a prefix tree: how often each branch was taken.

When a whole class samples N tokens from the same text, each with its own seed, the draws share
their beginnings: at low temperature most of them walk one path, at high temperature the tree
fans out at the first token. Merging them by common prefix shows that at a glance: every node is
a token after a given prefix, counted by how many draws went through it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ROOT = ""  # the root's id: the shared text itself


@dataclass(frozen=True)
class Branch:
    """One node of the tree: ``token`` after the tokens of its ``path``."""
    id: str  # the path as "t1/t2/…" (unique per node)
    parent: str  # the parent's id (ROOT for a first token)
    token: int
    depth: int  # 1 = the first token drawn
    count: int  # draws that went through this node


def merge(draws: Sequence[Sequence[int]]) -> list[Branch]:
    """Every node of the prefix tree of ``draws``, parents before children, most taken first among siblings."""
    counts: dict[tuple[int, ...], int] = {}
    for draw in draws:
        for depth in range(1, len(draw) + 1):
            path = tuple(int(t) for t in draw[:depth])
            counts[path] = counts.get(path, 0) + 1
    order = sorted(counts, key=lambda p: (len(p), _sibling_key(p, counts)))
    return [Branch(id=_id(path), parent=_id(path[:-1]), token=path[-1], depth=len(path), count=counts[path])
            for path in order]


def _sibling_key(path: tuple[int, ...], counts: dict[tuple[int, ...], int]) -> tuple:
    """Ancestors' ranks first (so siblings stay together), then most taken first, then by token id."""
    return tuple((-counts[path[:d]], path[d - 1]) for d in range(1, len(path) + 1))


def _id(path: tuple[int, ...]) -> str:
    return "/".join(str(t) for t in path) if path else ROOT


def distinct_at(branches: Sequence[Branch], depth: int) -> int:
    """How many different tokens were drawn at ``depth`` (after any prefix): how far the tree fanned out."""
    return sum(1 for b in branches if b.depth == depth)


def top_share(branches: Sequence[Branch], draws: int) -> float:
    """The share of the draws that took the most common first token (1.0: everyone agreed)."""
    firsts = [b.count for b in branches if b.depth == 1]
    return max(firsts) / draws if firsts and draws else 0.0
