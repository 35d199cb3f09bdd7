"""Every sentence the sharing parts say to a learner: links, replays of a link or a session file, the copy button."""
from __future__ import annotations

import json

THE_LINK, THE_FILE = "the link", "the session file"  # what a replay rebuilt from (``where``, ``source``)

VIEW_MISSING = "The link asks for the view {view}, which this page does not have; its views are: {views}."
UNKNOWN_MODEL = "Unknown model {model} in the link; using {default}. Available: {available}."
REBUILDING = "Rebuilding the session…"
NOT_REPLAYED = "{error} The link was not replayed."
LONG_PROMPT_GONE = ("The link names a long prompt kept on the server that made it; this server does not have it (it "
                    "restarted, or the link came from another server). Ask for the session file instead.")
CLASS_KEEPS_TEXT = ("This tab holds the class's teacher key, so its text is the class's text: the browser's back "
                    "or forward button leaves it as it is; only an action in a teacher tab of this class, such as a "
                    "step, Undo, Reset or a lesson path's stop, changes it.")
COPIED, COPY_FAILED = "Copied.", "Copy the address bar instead."


def rebuilt_text(where: str, n: int) -> str:
    """What a replay says once done (``where``: ``THE_LINK`` or ``THE_FILE``; ``n``: steps replayed). It names what
    ``where`` held, not the page's state: the notice stays on screen while the learner steps on."""
    if n == 0:
        return f"Rebuilt from {where}: its prompt ({where} holds no steps)."
    return f"Rebuilt from {where}: the prompt and {n} step{'' if n == 1 else 's'}, replayed exactly."


def replaying(source: str, step: int, total: int) -> str:
    """The progress bar's line while a replay runs."""
    return f"Replaying {source}: step {step} of {total}"


def js_string(sentence: str) -> str:
    """A sentence as a JavaScript string literal (for the copy button's script)."""
    return json.dumps(sentence)
