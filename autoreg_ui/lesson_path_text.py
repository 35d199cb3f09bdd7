"""What the lesson path's bar says (``lesson_path``): where the teacher is, the stop's note, the way on."""
from __future__ import annotations

PREVIOUS = "← Previous stop"
NEXT = "Next stop →"
LEAVE = "Leave the path"
BACK = "Back to this stop"
PREVIOUS_HELP = "Open the previous stop in this tab, as you left it (or as its link sets it up)."
NEXT_HELP = "Open the next stop in this tab, set up the way its note assumes. Presenter mode stays on."
LEAVE_HELP = "Stop following the path; the page stays as it is."
BACK_HELP = "You moved to another page: open the path's current stop again."
BAR_LABEL = "Lesson path"
NOTES = "Notes"
NOTES_HELP = ("This stop's note (what to do here) and **Leave the path**, kept here so the bar takes less of the "
              "projector. Opening this shows them on the projector too.")


def minutes_text(minutes: int) -> str:
    """'1 min', '8 min'."""
    return f"{minutes} min"


def where_text(path_name: str, at: int, total: int, title: str, minutes: int) -> str:
    """The bar's first line: which path, which stop of how many, its title and its minutes."""
    return f"**{path_name}** · stop {at + 1} of {total}: **{title}** ({minutes_text(minutes)})"


def where_short(at: int, total: int, title: str, minutes: int) -> str:
    """The bar's line in presenter mode, where the path's name moves into the stop's notes."""
    return f"Stop {at + 1} of {total}: **{title}** ({minutes_text(minutes)})"


def notes_heading(path_name: str, title: str) -> str:
    """The first line of the folded notes: which path and which stop they belong to."""
    return f"**{path_name}** · {title}"


def away_text(title: str) -> str:
    """When the teacher opened another page from the sidebar while on a path."""
    return f"You left the path's stop **{title}** for another page; the path is kept."

PROMPT_FOLDED = "Prompt (change it here)"  # presenter mode folds the prompt box under the step
