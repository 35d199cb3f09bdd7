"""What the serving page says of a speculative run: tokens per round, and why a run was slower than plain
decoding, each cause read from the run's own measured times (kept apart from ``text.py``, the lesson's prose)."""
from __future__ import annotations

from statistics import fmean

from autoreg_core.experiments import speculative_decoding as speculative


def _mean(values: list[float]) -> float:
    return fmean(values) if values else float("nan")


WEAK_DRAFT = 0.5  # an early exit "is a weak draft" while fewer than this share of its guesses are kept


def round_tokens(run: speculative.Speculated) -> float:
    """Tokens a round added on average: the run's tokens but the first, which the prefill chose before any round."""
    return (len(run.tokens) - 1) / len(run.rounds) if run.rounds and run.tokens else float("nan")


def slower_because(run: speculative.Speculated, plain_token: float) -> str:
    """Why a slower run lost, read from its measured parts: a round's drafting and verify pass (each with its choice
    of tokens) against what plain decoding takes for the tokens a round brought, ``plain_token`` ms each (a decode
    pass and its choice, ``Decoded.token_ms``: timed like a round)."""
    if not run.rounds:
        return "the run ended at the prefill's token, before any round"
    if not run.drafted:
        return "the draft found no guesses, so every round was one plain step with the search for guesses on top"
    per_round = round_tokens(run)
    drafting, verify = _mean([r.draft_ms for r in run.rounds]), _mean([r.verify_ms for r in run.rounds])
    plain = per_round * plain_token
    worth = f"plain decoding takes for the {per_round:.2f} tokens a round brought ({plain:,.1f} ms)"
    if drafting >= plain:
        return f"drafting alone ({drafting:,.1f} ms a round) cost more than {worth}"
    if verify >= plain:
        return (f"the verify pass alone ({verify:,.1f} ms, {verify / plain_token:.1f}× a plain token's time) cost "
                f"more than {worth}: checking the guesses in one pass was far from free on this machine")
    if drafting + verify >= plain:
        return f"drafting and verifying together ({drafting + verify:,.1f} ms a round) cost more than {worth}"
    return (f"a round's drafting and verifying ({drafting + verify:,.1f} ms) cost less than {worth}, so the time was "
            "lost in parts of the run these figures leave out")


def speculative_sentence(case, run: speculative.Speculated) -> str:
    """Why this draft was faster or slower than plain decoding on this prompt (markdown, from the measurements;
    ``case``: ``serving_measurements.SpecCase``)."""
    speedup = case.plain.ms / run.ms
    if not run.rounds:
        return (f"**{run.draft}** on “{case.label}”: no round ran, the prefill's token ended the run; "
                f"**{speedup:.2f}×** plain decoding's speed.")
    verify, drafting = _mean([r.verify_ms for r in run.rounds]), _mean([r.draft_ms for r in run.rounds])
    plain_token = _mean(case.plain.token_ms)
    rate = f"{run.acceptance_rate:.0%} of {run.drafted} guesses kept" if run.drafted else "no guesses found"
    text = (f"**{run.draft}** on “{case.label}”: {rate}, {len(run.tokens) / max(1, run.forward_passes):.2f} tokens "
            f"per model pass (the prefill's pass and token included). A round took {drafting:,.1f} ms of drafting "
            f"and a {verify:,.1f} ms verify pass for {round_tokens(run):.2f} tokens (the prefill's token not "
            f"counted), against {plain_token:,.1f} ms per token for plain decoding (its pass and its choice): ")
    if speedup >= 1:
        return text + f"**{speedup:.2f}× faster**."
    why = slower_because(run, plain_token)
    if run.draft.startswith(speculative.EARLY_EXIT) and (not run.drafted or run.acceptance_rate < WEAK_DRAFT):
        why += ("; and an early exit is a weak draft, keeping few guesses, because the first layers alone were never "
                "trained to predict the next token (LayerSkip-style training makes them usable)")
    return text + f"**{speedup:.2f}×, slower**: {why}."
