"""A prefix is a context ready to decode from; lending a session's never touches it."""
import pytest
import torch

from autoreg_core import Session
from autoreg_core.engine import decode, prefix


def test_prefill_gives_the_same_logits_as_a_session(tiny):
    session = Session(tiny, "The cat sat on the")
    made = prefix.prefill(tiny, session.prompt_ids)
    lent = prefix.of_session(session)  # prefills the session (it had not run yet)
    assert session.prefill_record is not None and lent.ids == made.ids == tuple(session.prompt_ids)
    assert torch.allclose(made.logits, lent.logits, atol=1e-5) and made.logits.shape == (tiny.spec.vocab,)
    assert made.cache.get_seq_length() == len(made.ids)
    with pytest.raises(ValueError):
        prefix.prefill(tiny, [])


def test_a_lent_prefix_follows_the_session_as_it_was(tiny):
    from autoreg_core import SamplingConfig

    session = Session(tiny, "Once upon a time")
    session.step(SamplingConfig(temperature=0))
    lent = prefix.of_session(session)
    assert list(lent.ids) == session.ids and torch.equal(lent.logits, session.pending_logits)
    copy = decode.copy_cache(lent.cache, tiny)
    decode.forward(tiny, [5], copy)
    assert session.cache_len == len(session.ids)  # growing a copy leaves the session's cache alone
