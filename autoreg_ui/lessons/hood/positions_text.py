"""What the positions section says about a model that does not rotate its keys, or whose layers the cached-key
check cannot read: learned position tables (GPT-2, OPT), no positions at all, fused q/k/v projections.

Pure functions (no Streamlit); the numbers come from the model's own weights and config (``controller``).
"""
from __future__ import annotations

from autoreg_ui.lessons.hood.text import AGREE, GUIDES, POSITIONS, Q_WHOLE_SHIFT


def learned_explain(family: str, rows: int, width: int) -> str:
    """The positions section's opening for a model with a learned position table (GPT-2, OPT)."""
    return ("Attention's scores alone are blind to order: a query's dot product with a key is the same wherever the "
            "two tokens sit. The causal mask already breaks that symmetry, since each position sees only itself and "
            f"what came before it. {family} does not rotate its queries and keys: it **adds a learned position "
            f"vector** to each token's embedding before the first layer, row pos of a table of {rows:,} × {width:,} "
            "numbers learned in training. Every layer then works on token plus position, so the keys written into "
            "the cache already carry their absolute position, and a key never needs recomputing as the text grows. "
            f"The table has one row per position: this model cannot read a position past {rows - 1:,}. Below: the "
            "position ids of the steps, a row of the table, a position that is off by one, and left padding.")


def no_positions_explain(family: str) -> str:
    """The positions section's opening for a model that neither rotates nor adds positions from a table this page
    can find (BLOOM and MPT, for two, add a bias growing with distance to each attention score: ALiBi)."""
    return (f"{family} has neither rotary embeddings nor a learned position table: it tells positions apart another "
            "way, such as ALiBi (BLOOM's and MPT's: a penalty on each attention score that grows with the distance "
            "between the two tokens), or through the causal mask alone, each position seeing only itself and what came "
            "before it. Below: the position ids of the steps, a position that is off by one, and left padding.")


VECTOR_TITLE = "A row of the position table"


def position_vector_sentence(position: int, norm: float, next_cosine: float | None, token_norm: float) -> str:
    """Row ``position`` of a learned table, read from the weights: its length, its likeness to the next row."""
    nxt = ("" if next_cosine is None else
           f" Its cosine with row {position + 1:,} is {next_cosine:.2f} (1 = the same direction, 0 = unrelated).")
    return (f"Position {position:,} adds a vector of length **{norm:.2f}** to its token's embedding (the token "
            f"embeddings' mean length is {token_norm:.2f}).{nxt}")


def key_check_skipped(kind: str, family: str) -> str:
    """Why the cached-key check is not offered for this model (``kind``: hood.controller's positions kind)."""
    if kind == "learned":
        return (f"No rotation to check: {family} adds its position vectors to the embeddings before the first layer, "
                "so a cached key is the layer's key projection of its input, which already carries that position, "
                "computed once in its own step.")
    if kind == "none":
        return f"No rotation to check: {family} has no rotary embeddings."
    return (f"This check recomputes a key with the layer's own key projection and rotation; the page cannot read "
            f"those in {family}'s attention layers, so the check is not offered for it.")


def learned_shift_sentence(shift: int, delta_last: float, kl_last: float, changed_last: bool, delta_all: float,
                           kl_all: float) -> str:
    """The off-by-one check read for a model that adds a learned vector per absolute position (GPT-2, OPT)."""
    top = ("the top token **changes**" if changed_last else "the top token stays the same")
    if delta_all < AGREE * 10:
        whole, why = "almost nothing", (", yet the logits hardly move: its neighbouring rows, or its use of them, "
                                        "differ little")
    else:
        whole, why = "**as well**", ": another input, not only the same distances"
    return (f"Feeding only the last token {shift} position late moves the logits by up to **{delta_last:.2f}** "
            f"(KL {kl_last:.3g} bits), and {top}: it gets the position vector of another row. Shifting the "
            f"**whole** text by {shift} changes {whole} (max |Δ| {delta_all:.2g}, KL {kl_all:.2g} bits): this "
            f"model's positions are absolute, so every token gets another row of the table{why}.")


Q_WHOLE_SHIFT_LEARNED = (Q_WHOLE_SHIFT[0], Q_WHOLE_SHIFT[1],
                         "Max |Δ logit| **{delta:.1e}** (KL {kl:.1e} bits): this model adds a learned vector for each "
                         "absolute position, so shifting every position gives every token another row of its table: "
                         "another input, not only the same distances.")

NO_TOKEN = "—"  # the position table's "token fed" cell for a pass that fed many tokens (the prefill, folded steps)

def other_positions_note(kind: str, family: str) -> str:
    """Under the positions tab's label, which names rotary embeddings (the label is kept: the open section's state,
    the page tests and the recorded page dump key on it): what this model does instead."""
    if kind == "learned":
        return (f"The tab's title names rotary embeddings, the scheme most families here use; {family} does not "
                "rotate: it adds a learned position vector to each token, and this tab shows that table and the cache.")
    return (f"The tab's title names rotary embeddings, the scheme most families here use; {family} neither "
            "rotates its queries and keys nor adds a learned position vector, and this tab shows what that means for "
            "the cache.")


LEARNED_POSITIONS_GUIDE = (
    "Beside the position ids of the steps: a row of the learned position table read from the weights, the last "
    "token fed at the wrong position, the whole text moved by one, and the text batched with left padding.",
    "Set the table row's position to 0, then 1, then one near the end of the table: does the vector's length "
    "change, and how alike is each row to the next one?",
    "Nothing rotates this model's keys: why is a key stored in the cache still right when later tokens arrive?")
NO_POSITIONS_GUIDE = (
    "Beside the position ids of the steps: the last token fed at the wrong position, the whole text moved by one, "
    "and the text batched with left padding, on a model that neither rotates its keys nor adds a position vector.",
    "Run the last step with its position shifted by one: how far do the logits move when the model has no position "
    "vector or rotation to read the ids with?",
    "If only the causal mask tells positions apart, how can the model still know which token came first?")


def guides_for(kind: str) -> dict[str, tuple[str, str, str]]:
    """The Notice · Try · Ask boxes for a model whose positions are ``kind`` (hood.controller's): the stored
    ``GUIDES`` for a rotary model, the positions tab's own box otherwise."""
    if kind == "learned":
        return {**GUIDES, POSITIONS: LEARNED_POSITIONS_GUIDE}
    if kind == "none":
        return {**GUIDES, POSITIONS: NO_POSITIONS_GUIDE}
    return GUIDES


def position_check(read: int, total: int, delta: float, kl_bits: float, changed: bool) -> str:
    """The position question's check: the last step of the ``read`` tokens it ran on, fed one position late."""
    top = "changed" if changed else "unchanged"
    where = (f"the step that fed the last token at {read - 1:,}" if read >= total else
             f"the last {read:,} tokens (as many as one pass reads here), read as a text of their own: the step "
             f"that fed their last token at {read - 1:,}")
    return (f"Checked on {where}: fed one position later instead, its logits move by up to {delta:.2f} "
            f"(KL {kl_bits:.3g} bits, top token {top}).")
