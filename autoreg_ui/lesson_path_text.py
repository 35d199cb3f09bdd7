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


def minutes_text(minutes: int) -> str:
    """'1 min', '8 min'."""
    return f"{minutes} min"


def where_text(path_name: str, at: int, total: int, title: str, minutes: int) -> str:
    """The bar's first line: which path, which stop of how many, its title and its minutes."""
    return f"**{path_name}** · stop {at + 1} of {total}: **{title}** ({minutes_text(minutes)})"


def away_text(title: str) -> str:
    """When the teacher opened another page from the sidebar while on a path."""
    return f"You left the path's stop **{title}** for another page; the path is kept."

PROMPT_FOLDED = "Prompt (change it here)"  # presenter mode folds the prompt box under the step
