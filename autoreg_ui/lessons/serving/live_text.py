"""What the serving page's live panel says to a tab alone on the server, and about the requests it sends of its own.
Every figure comes from the batcher (``autoreg_core.runtime.batcher``) or the requests' measurement
(``autoreg_core.experiments.own_requests``).

The batcher counts the decode steps that went through it: one batcher per loaded model, so a tab on another model
is not counted, nor a step that captures attention (a solo pass outside the batcher)."""
from __future__ import annotations

INVITE = "Send a few requests of your own and watch the batcher gather their steps into shared passes."


def own_in_window(ago: float | None, window_s: float) -> bool:
    """Requests sent ``ago`` seconds ago (None: none sent) are still in the panel's window: they started then, so
    every pass they rode in ended since."""
    return ago is not None and ago <= window_s


def alone_sentence(now, own_ago: float | None = None) -> str | None:
    """Said when no other live owner stepped through this model's batcher in the panel's window (None when one
    did). The batcher counts owners that are still alive: a text replaced since (a new prompt, another model)
    and requests another tab sent count only while they live, so the sentence speaks of the texts open now.
    ``own_ago``: seconds since this tab sent requests of its own (None: it has not)."""
    if now.others:
        return None
    window = f"the last {now.window_s:.0f} seconds"
    if own_in_window(own_ago, now.window_s):
        return (f"Apart from your own text and the requests you sent, none of the other texts open on this model "
                f"stepped through its batcher in {window}.")
    if not now.passes:
        return (f"No decode step, yours included, went through this model's batcher in {window}, so the "
                f"last-minute figures below are zero. {INVITE}")
    return (f"None of the other texts open on this model stepped through its batcher in {window} (a step that "
            f"captures attention, on the Attention page, runs outside it). {INVITE}")


OWN_RUNNING = "Your requests are in the batcher's queue…"


def own_button(requests: int) -> str:
    return f"Send {requests} requests of my own at once"


def own_help(requests: int, steps: int, prompt_tokens: int, text_tokens: int, max_rows: int) -> str:
    """The button's help: ``prompt_tokens`` (``controller.own_prompt``'s length) of the text's ``text_tokens``."""
    if prompt_tokens >= text_tokens:
        what = f"your whole text ({prompt_tokens} token{'s' if prompt_tokens != 1 else ''})"
    else:
        what = f"the last {prompt_tokens} tokens of your text"
    return (f"{requests} requests each continue {what} for {steps} tokens, from a different one of the model's "
            f"most likely next tokens after them and then greedily, as if {requests} tabs pressed Next token "
            f"together: the batcher puts the steps waiting when a pass starts into shared passes of up to {max_rows} "
            "rows each.")


def _ago(seconds: float) -> str:
    whole = int(seconds)
    return "just now" if whole < 1 else f"{whole} s ago"


def own_result(found, ago: float, window_s: float) -> str:
    """What the batcher did with the tab's own requests (``own_requests.OwnRequests``), as measured, sent ``ago``
    seconds ago; whether the panel's last ``window_s`` seconds still hold their passes."""
    passes = f"{found.passes:,} pass{'es' if found.passes != 1 else ''}"
    rows = f"{found.largest_pass} row{'s' if found.largest_pass != 1 else ''}"
    said = (f"Your {found.requests} requests, sent {_ago(ago)}, asked for {found.steps} decode steps in "
            f"{found.seconds:.2f} s; the batcher ran {passes} while they did, and their steps rode in passes of up to "
            f"{rows}. ")
    if own_in_window(ago, window_s):
        return said + ("The batcher treats each request as a tab of its own, so the last-minute figures below include "
                       "their passes.")
    if ago - found.seconds <= window_s:  # they started before the window, some of their passes ended inside it
        return said + (f"They began more than {window_s:.0f} seconds ago, so the last-minute figures below include "
                       "only those of their passes that ended in it.")
    return said + (f"They ended more than {window_s:.0f} seconds ago, so the last-minute figures below no longer "
                   "include their passes.")
