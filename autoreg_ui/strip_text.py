"""The token strip's key (the step page, a class's views and the hand-out draw the same strip)."""
from __future__ import annotations


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def strip_legend(prompt_len: int, generated: int, unlikely: float) -> str:
    """The key to the token strip's colours and marks (the colour is never the only cue)."""
    return (f"{_count(prompt_len, 'prompt token', 'prompt tokens')} (grey, dashed border) · {generated:,} generated, "
            "shaded by the probability the model's own softmax gave them when chosen: pale yellow for unlikely, "
            f"deeper blue-green for confident. A dotted underline marks a pick under {unlikely:.0%}, a purple outline "
            "a forced token. Hover a token for its id, probability before and after the filters, rank and log-prob; "
            "a screen reader reads the probability and rank with each token.")


STRIP_MARKS = "In the tokens, · is a space, ↵ a new line, → a tab and ∅ an empty piece."
