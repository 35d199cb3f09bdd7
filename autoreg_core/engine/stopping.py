"""Why generation ends: the EOS token, the max-new-tokens budget, or a stop sequence."""
from __future__ import annotations

import torch
from transformers import EosTokenCriteria, MaxLengthCriteria

EOS = "eos"
MAX_NEW_TOKENS = "max_new_tokens"
STOP_SEQUENCE = "stop_sequence"


def matched_stop_sequence(generated_text: str, stop_sequences: tuple[str, ...]) -> str | None:
    """The first stop sequence found in the generated text (not the prompt), if any.

    Done on text rather than ids because a stop string can straddle token boundaries and the
    page must name which one matched.
    """
    hits = [(generated_text.find(s), s) for s in stop_sequences if s and s in generated_text]
    return min(hits)[1] if hits else None


def stop_reason(ids: list[int] | torch.Tensor, prompt_len: int, generated_text: str, max_new_tokens: int,
                eos_ids: list[int], stop_sequences: tuple[str, ...]) -> tuple[str, str] | None:
    """(kind, human message) when the sequence ``ids`` must stop, else None.

    The two token-level checks are transformers' own stopping criteria.
    """
    ids = torch.as_tensor(ids, dtype=torch.long)
    n_new = ids.shape[-1] - prompt_len
    if n_new > 0 and eos_ids:
        if bool(EosTokenCriteria(eos_token_id=eos_ids)(ids.view(1, -1), None)[0]):
            return EOS, "the model produced its end-of-sequence (EOS) token"
    seq = matched_stop_sequence(generated_text, stop_sequences)
    if seq is not None:
        return STOP_SEQUENCE, f"stop sequence {seq!r} appeared in the output"
    if bool(MaxLengthCriteria(max_length=prompt_len + max_new_tokens)(ids.view(1, -1), None)[0]):
        return MAX_NEW_TOKENS, f"reached max new tokens ({max_new_tokens})"
    return None
