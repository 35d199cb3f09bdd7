"""The logit lens: read a next-token guess out of every layer, not only the last.

The model turns its last hidden state into logits with two modules: the final norm, then the LM
head. Applying those same two modules to the hidden state after layer l asks "if the model had to
answer now, after l layers, what would it say?". Entry 0 is the token embedding (before any layer).

transformers already applies the final norm to the last entry of ``hidden_states`` (it is the
model's ``last_hidden_state``), so that entry goes through the LM head alone; norming it twice
would change it. With that handled, the lens at the last layer is exactly the model's own logits.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from autoreg_core.engine import decode

MAX_TOKENS = 1024  # hidden states of every layer for every position: ~70 MB at 1,024 tokens for SmolLM2
NORM_NAMES = ("norm", "final_layernorm", "ln_f", "final_layer_norm")  # Llama/Mistral/Qwen, Phi, GPT-2, OPT


def final_norm(model) -> torch.nn.Module:
    """The norm between the last layer and the LM head."""
    decoder = model.get_decoder()
    for name in NORM_NAMES:
        module = getattr(decoder, name, None)
        if isinstance(module, torch.nn.Module):
            return module
    raise ValueError(f"{type(model).__name__}: no final norm found (looked for {', '.join(NORM_NAMES)}).")


def last_entry_is_normed(model) -> bool:
    """Whether ``hidden_states[-1]`` is already after the final norm (transformers' default for LMs)."""
    tied = getattr(model.config, "tie_last_hidden_states", None)
    return True if tied is None else bool(tied)


def layer_logits(bundle, hidden_states: tuple[torch.Tensor, ...], position: int = -1) -> torch.Tensor:
    """float32 [layers + 1, vocab]: the final norm and LM head applied to each entry at ``position``."""
    model = bundle.model
    norm, head = final_norm(model), model.get_output_embeddings()
    normed_last = last_entry_is_normed(model)
    rows = []
    with torch.inference_mode():
        for i, states in enumerate(hidden_states):
            h = states[:, position]
            if not (normed_last and i == len(hidden_states) - 1):
                h = norm(h)
            rows.append(capped(model.config, head(h)[0].float().cpu()))
    return torch.stack(rows)


def capped(config, logits: torch.Tensor) -> torch.Tensor:
    """The model's own last touch on its logits: Gemma 2 caps them at ±c with c·tanh(logits / c)
    (``final_logit_softcapping``); models without a cap leave them as they are."""
    cap = getattr(config, "final_logit_softcapping", None)
    return logits if not cap else torch.tanh(logits / cap) * cap


@dataclass
class LensReading:
    """The next-token guess at every depth for one position, and how the eventual token fared."""

    context_len: int  # tokens read; the guess is for the token after them
    target_id: int  # the token eventually chosen (or the model's final favourite)
    top_ids: torch.Tensor  # int64 [layers + 1, k]: most likely first, per entry
    top_probs: torch.Tensor  # float32 [layers + 1, k]
    target_probs: list[float]  # p(target) per entry
    target_ranks: list[int]  # 1 = the entry's favourite
    last_gap: float = 0.0  # max |lens at the last layer − the model's logits| (0 up to float rounding)

    @property
    def depth(self) -> int:
        """Entries read: the embedding and one per layer."""
        return len(self.target_probs)

    @property
    def first_top(self) -> int | None:
        """The first entry whose favourite is the target."""
        return next((i for i, r in enumerate(self.target_ranks) if r == 1), None)

    @property
    def settles_at(self) -> int | None:
        """The entry from which the target stays the favourite through the last layer."""
        at = None
        for i in range(self.depth - 1, -1, -1):
            if self.target_ranks[i] != 1:
                break
            at = i
        return at


def read_lens(per_layer: torch.Tensor, target_id: int, context_len: int, k: int = 10) -> LensReading:
    """Top-k and the target's probability and rank at every entry of ``layer_logits``."""
    probs = decode.softmax(per_layer)
    top = torch.topk(probs, k=min(k, probs.shape[-1]), dim=-1)
    target = probs[:, target_id]
    ranks = [decode.rank_of(row, target_id) for row in probs]
    return LensReading(context_len, int(target_id), top.indices, top.values, target.tolist(), ranks)


def logit_lens(bundle, context_ids: list[int], target_id: int | None = None, k: int = 10) -> LensReading:
    """One pass over ``context_ids`` (no cache) with hidden states, read through the lens.

    ``target_id`` is the token that was eventually chosen at this position; by default the model's
    own favourite.
    """
    if not 1 <= len(context_ids) <= MAX_TOKENS:
        raise ValueError(f"The logit lens reads 1 to {MAX_TOKENS:,} tokens of context; "
                         f"this one has {len(context_ids):,}.")
    fwd = decode.forward(bundle, context_ids, None, hidden_states=True)
    per_layer = layer_logits(bundle, fwd.hidden_states)
    model_logits = fwd.logits[0]
    target = int(torch.argmax(model_logits)) if target_id is None else int(target_id)
    reading = read_lens(per_layer, target, len(context_ids), k)
    reading.last_gap = float((per_layer[-1] - model_logits).abs().max())
    return reading
