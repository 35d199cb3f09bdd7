"""logits = W·h + b: the last step of every forward pass, taken apart.

The model's final hidden state h (after the final norm) is one vector of d numbers. The LM head is a
matrix W with one row per vocabulary token (and sometimes a bias b). Each logit is the dot product of
h with that token's row: a row works as a template, and a token scores high when h points the same
way as its template. Writing the dot product as |W_t|·|h|·cos θ separates how long the template is
from how well h matches it.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from autoreg_core.engine import decode


@dataclass(frozen=True)
class TokenScore:
    token_id: int
    logit: float  # the model's own logit
    dot: float  # W_t · h + b_t, recomputed here
    row_norm: float  # |W_t|
    cosine: float  # cos of the angle between W_t and h
    bias: float


@dataclass(frozen=True)
class Unembedding:
    """The last hidden state, the LM head, and how they make the logits."""
    hidden_norm: float  # |h|
    hidden_size: int
    vocab: int
    has_bias: bool
    tied: bool  # W is the token embedding matrix itself
    largest_gap: float  # max over the whole vocabulary of |W·h + b − the model's logits|
    top: list[TokenScore]


def lm_head(model) -> tuple[torch.Tensor, torch.Tensor | None]:
    """W [vocab, d] and b [vocab] (None when the head has no bias)."""
    head = model.get_output_embeddings()
    return head.weight, head.bias


def unembed(bundle, ids: list[int], k: int = 5) -> Unembedding:
    """One pass over ``ids`` with hidden states; rebuild the last position's logits as W·h + b and decompose the top
    k."""
    fwd = decode.forward(bundle, [list(ids)], None, hidden_states=True)
    h = fwd.hidden_states[-1][0, -1].float()  # transformers hands back the last entry already normed
    W, b = lm_head(bundle.model)
    W = W.detach().float()
    rebuilt = W @ h + (b.detach().float() if b is not None else 0.0)
    logits = fwd.logits[0].float()
    top_ids = torch.topk(logits, k).indices.tolist()
    h_norm = float(h.norm())
    rows = []
    for t in top_ids:
        row = W[t]
        bias = float(b[t]) if b is not None else 0.0
        rows.append(TokenScore(t, float(logits[t]), float(rebuilt[t]), float(row.norm()),
                               float(torch.dot(row, h) / (row.norm() * h_norm)), bias))
    tied = W.data_ptr() == bundle.model.get_input_embeddings().weight.data_ptr()
    return Unembedding(h_norm, h.numel(), W.shape[0], b is not None, tied,
                       float((rebuilt - logits).abs().max()), rows)
