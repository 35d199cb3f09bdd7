"""What the serving page's live panel says to a tab alone on the server, and about the requests it sends of its own.
Every figure comes from the batcher (``autoreg_core.runtime.batcher``) or the requests' measurement
(``autoreg_core.experiments.own_requests``)."""
from __future__ import annotations


def alone_sentence(now) -> str | None:
    """Said when no other tab or request stepped in the panel's window (None when some did)."""
    if now.others:
        return None
    window = f"the last {now.window_s:.0f} seconds"
    if not now.passes:
        return (f"No tab on this server, yours included, asked for a decode step in {window}, so every figure below "
                "is zero. Send a few requests of your own and watch the batcher gather their steps into shared passes.")
    return (f"No other open tab asked this server for a decode step in {window}: nobody is generating beside you. "
            "Send a few requests of your own and watch the batcher gather their steps into shared passes.")


OWN_RUNNING = "Your requests are in the batcher's queue…"


def own_button(requests: int) -> str:
    return f"Send {requests} requests of my own at once"


def own_help(requests: int, steps: int, prompt_tokens: int) -> str:
    return (f"{requests} requests each continue the last {prompt_tokens} tokens of your text for {steps} tokens, "
            "from a different one of its most likely next tokens and then greedily, as if "
            f"{requests} tabs pressed Next token together: the batcher puts the steps waiting at the same moment "
            "into one pass.")


def own_result(found) -> str:
    """What the batcher did with the tab's own requests (``own_requests.OwnRequests``), as measured."""
    passes = f"{found.passes:,} pass{'es' if found.passes != 1 else ''}"
    rows = f"{found.largest_pass} row{'s' if found.largest_pass != 1 else ''}"
    return (f"Your {found.requests} requests asked for {found.steps} decode steps in {found.seconds:.2f} s; the "
            f"batcher ran {passes} while they did, and their steps rode in passes of up to {rows}. It counts each "
            "request as a tab of its own, so the panel below now includes them.")
