"""Teacher forcing: one pass over a finished text gives back every step's log-prob (tiny model)."""
from __future__ import annotations

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments import teacher_forcing as teacher
from autoreg_core.experiments.prefill_decode import greedy_run

SAMPLED = SamplingConfig(temperature=0.9, top_k=0, top_p=1.0, seed=7, max_new_tokens=200)
GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=200)


def _least_likely(session: Session) -> int:
    """The token the model ranks last for the next position: as unlikely as a force can be."""
    return int(torch.argmin(session.next_pipeline(SAMPLED).raw_probs))


@pytest.fixture
def forced_session(tiny) -> Session:
    session = Session(tiny, "The cat sat on the")
    session.generate(5, SAMPLED)
    session.force(_least_likely(session), SAMPLED)
    session.generate(6, SAMPLED)
    return session


def test_one_pass_equals_the_steps_even_after_a_forced_token(tiny, forced_session):
    session = forced_session
    assert len(session.records) == 12 and session.records[5].forced
    scored = teacher.teacher_forced(tiny, session.ids, session.prompt_len)
    assert scored.ids == session.ids
    assert scored.scored_ids == session.generated_ids and len(scored.scored_ids) == 12
    stepped = torch.tensor([r.logprob for r in session.records], dtype=torch.float64)
    assert len(scored.logprobs) == len(stepped)
    assert torch.allclose(torch.tensor(scored.logprobs, dtype=torch.float64), stepped, rtol=1e-5, atol=1e-5)
    # the forced token is the least likely one: the one pass sees that as well
    assert scored.logprobs[5] == pytest.approx(min(scored.logprobs), abs=1e-6)
    assert scored.top_ids[5] != session.records[5].token_id


def test_the_models_own_guess_is_the_greedy_token(tiny):
    session = Session(tiny, "Once upon a time")
    session.generate(10, GREEDY)
    scored = teacher.teacher_forced(tiny, session.ids, session.prompt_len)
    assert scored.top_ids == session.generated_ids and len(scored.top_ids) == 10


def test_long_texts_are_scored_up_to_the_bound(tiny, monkeypatch):
    monkeypatch.setattr(teacher, "MAX_TOKENS", 12)
    session = Session(tiny, "The cat sat on the")
    session.generate(20, GREEDY)
    scored = teacher.teacher_forced(tiny, session.ids, session.prompt_len)
    assert scored.ids == session.ids[:12]
    assert len(scored.logprobs) == 12 - session.prompt_len
    stepped = [r.logprob for r in session.records[:12 - session.prompt_len]]
    assert scored.logprobs == pytest.approx(stepped, abs=1e-5)


def test_nothing_to_score_is_an_error(tiny):
    with pytest.raises(ValueError):
        teacher.teacher_forced(tiny, [5, 6, 7], 3)


def test_stepped_forward_ms_sums_the_passes_behind_the_log_probs(tiny, forced_session):
    session = forced_session
    expected = session.prefill_record.time_ms + sum(r.forward_ms for r in session.records[:-1])
    assert teacher.stepped_forward_ms(session) == pytest.approx(expected)
    assert teacher.stepped_forward_ms(Session(tiny, "The cat")) == 0.0


def test_first_forced_step(tiny, forced_session):
    assert teacher.first_forced_step(forced_session.records) == 6
    session = Session(tiny, "The cat")
    session.generate(3, GREEDY)
    assert teacher.first_forced_step(session.records) is None


def test_own_continuation_is_what_the_model_writes_itself(tiny):
    session = Session(tiny, "The dog sat on the")
    session.generate(8, GREEDY)
    own = teacher.own_continuation(tiny, session.ids + [1, 2, 3], session.prompt_len, 8)
    assert own == session.generated_ids and len(own) == 8
    assert own == greedy_run(tiny, session.prompt_ids, 8).generated_ids
