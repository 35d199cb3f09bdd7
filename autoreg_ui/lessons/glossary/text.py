"""The glossary page's own sentences (the terms themselves are shared: ``autoreg_ui.glossary_text``)."""
from __future__ import annotations

TITLE = "Glossary"
FIND_LABEL = "Find a term"
FIND_HELP = "Type part of a word: the list keeps the terms whose name or meaning contains it (case does not matter)."
FIND_PLACEHOLDER = "e.g. cache, top-p, perplexity"


def found_sentence(query: str, found: int, total: int) -> str:
    """What the search kept, said with its count (the query is shown as typed, as code so nothing renders)."""
    shown = query.replace("`", "'")
    if found == 0:
        return f"No term matches `{shown}`. Try a shorter word, or clear the box to see all {total:,} terms."
    term = "term matches" if found == 1 else "terms match"
    return f"{found:,} of {total:,} {term} `{shown}`."


# ---------------------------------------------------------------- Notice · Try · Ask (guide.show)
GUIDES: dict[str, tuple[str, str, str]] = {  # keyed by the view's own heading
    "glossary": (
        "Each entry says where in the app the idea happens, so a word can be seen at work, not only read.",
        "Find “cache” with the box above: how many entries mention it, and on how many different pages?",
        "Which two terms here would you explain together, because neither makes sense without the other?"),
}
