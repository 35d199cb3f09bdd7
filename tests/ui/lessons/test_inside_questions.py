"""The inside lesson's predict-then-check questions: their keys (which key the page's widgets), their words (the
lesson's own sentences) and their checks, run on the tiny model."""
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui.lessons.inside import questions, text
from autoreg_ui.predict import Live

from . import checks

EXPECTED = (  # (key, its words in text, its check)
    ('passes', 'INSIDE_PASSES', 'inside_passes'),
    ('lens', 'INSIDE_LENS', 'inside_lens'),
    ('phases', 'INSIDE_PHASES', 'inside_phases'),
)


def test_the_questions_keep_their_keys_and_their_words():
    checks.assert_keys_and_words(questions, text, EXPECTED, [True, True, True])


@pytest.mark.parametrize("index", range(3))
def test_each_check_grades_a_choice_with_a_filled_answer(live, index):
    checks.assert_grades(questions.QUESTIONS[index], live)


def test_the_inside_questions_count_this_sessions_tokens(live):
    ask, choices = questions.QUESTIONS[0].ask(live)
    n = len(live.session.records)
    assert f"{n:,} generated tokens" in ask and choices == ("1", f"{n:,}", f"{n + 1:,}")
    ask, _ = questions.QUESTIONS[2].ask(live)
    assert f"the {live.session.prompt_len:,}-token prompt" in ask


def _shared_every(tiny, shared_calls):
    """A step pass that reports the calls in ``shared_calls`` (1-based) as passes other tabs' steps rode in."""
    from autoreg_core.engine.passes import PassResult, solo_step

    solo, calls = solo_step(tiny), []

    def step_pass(cache, token, owner=None):
        calls.append(token)
        done = solo(cache, token, owner)
        return PassResult(done.logits, done.ms, 3 if len(calls) in shared_calls else 1)
    return step_pass


def test_the_lens_question_targets_the_models_own_top_token_not_the_chosen_one(tiny):
    from autoreg_core.experiments.logit_lens import logit_lens
    from autoreg_ui.lessons.inside import controller

    s = Session(tiny, "The cat sat")
    s.step(SamplingConfig(temperature=0))
    s.force(controller.rank_token(s, SamplingConfig(temperature=0), 20), SamplingConfig(temperature=0))
    live = Live(tiny, s, SamplingConfig())
    top = int(s.records[-1].top_ids[0])
    chosen = s.records[-1].token_id
    assert logit_lens(tiny, list(s.ids[:-1]), chosen).first_top is None  # the chosen token is never the top one
    ask, _ = questions.QUESTIONS[1].ask(live)
    assert f"the model's own top token was “{questions.token_label(live, top)}”" in ask
    reading = logit_lens(tiny, list(s.ids[:-1]), top)
    checked = questions.inside_lens(live)
    layers = tiny.spec.n_layers
    assert checked.right == questions.lens_choice(reading.first_top, layers)
    assert checked.answer == text.lens_answer(reading.first_top, reading.settles_at, layers, reading.target_ranks[-1])
    assert reading.settles_at is not None and reading.target_ranks[-1] == 1  # the top token is top at the end
    assert "**Never**" not in checked.answer and "and it stays top from" in checked.answer


def test_the_lens_answer_is_true_when_the_token_is_never_the_top_one(tiny):
    """The state the old answer got wrong ("top at the very end … stays top"): a step whose top token the lens ranks
    first at no layer. Built by giving the last record a top token no entry of the lens puts first."""
    import dataclasses

    import torch

    from autoreg_core.experiments.logit_lens import logit_lens

    s = Session(tiny, "The cat sat")
    for _ in range(2):
        s.step(SamplingConfig(temperature=0))
    context = list(s.ids[:s.records[-1].context_len])
    firsts = set(logit_lens(tiny, context).top_ids[:, 0].tolist())
    never = next(t for t in range(tiny.spec.vocab) if t not in firsts)
    s.records[-1] = dataclasses.replace(s.records[-1], top_ids=torch.tensor([never], dtype=torch.int32))
    reading = logit_lens(tiny, context, never)
    assert reading.first_top is None and reading.target_ranks[-1] > 1  # the state is reached
    checked = questions.inside_lens(Live(tiny, s, SamplingConfig()))
    assert checked.right == 3  # "never before the end"
    assert checked.answer.startswith("**Never**: the lens ranks it first at no layer, not even after the last "
                                     f"(rank {reading.target_ranks[-1]} there).")
    assert "stays top" not in checked.answer and "First ranked top" not in checked.answer


def test_the_phases_median_leaves_out_shared_passes_as_the_attention_page_does(tiny):
    import statistics

    from autoreg_core.engine.kv_cache import solo_phase_times

    s = Session(tiny, "The cat sat", step_pass=_shared_every(tiny, {2, 4}))
    for _ in range(5):
        s.step(SamplingConfig(temperature=0))
    solo = [r.forward_ms for r in s.records if r.pass_rows == 1]
    assert len(solo) == 3
    times = solo_phase_times(s)
    assert times.decode_ms_median == statistics.median(solo)
    said = questions.inside_phases(Live(tiny, s, SamplingConfig())).answer
    assert f"a decode step **{times.decode_ms_median:.1f} ms** (median of the 3 this tab ran alone; 2 that shared " \
           "a pass with other tabs' steps are left out)" in said
    every = Session(tiny, "The cat sat", step_pass=_shared_every(tiny, {1, 2}))
    for _ in range(2):
        every.step(SamplingConfig(temperature=0))
    with pytest.raises(ValueError, match="shared its pass"):
        questions.inside_phases(Live(tiny, every, SamplingConfig()))
    alone = Session(tiny, "The cat sat")
    alone.step(SamplingConfig(temperature=0))
    said = questions.inside_phases(Live(tiny, alone, SamplingConfig())).answer
    assert "(median of the 1 this tab ran alone)" in said and "left out" not in said


def test_the_passes_answer_says_why_the_gap_is_not_zero(tiny):
    s = Session(tiny, "The cat sat", step_pass=_shared_every(tiny, {2}))
    for _ in range(4):
        s.step(SamplingConfig(temperature=0))
    said = questions.inside_passes(Live(tiny, s, SamplingConfig())).answer
    assert "same arithmetic" not in said
    assert "1 of the steps chose from logits of a decode pass shared with other tabs' steps" in said


def test_the_phases_answer_says_whose_pass_timed_a_copied_prefill(tiny):
    """A prefill copied from the shared store keeps the first tab's time: the answer says so, not "in this session"."""
    from types import SimpleNamespace

    from autoreg_core.engine import decode

    class Store:
        def __init__(self):
            self.kept = {}

        def lookup(self, bundle, ids):
            return self.kept.get(tuple(ids))

        def remember(self, bundle, ids, cache, logits, ms):
            self.kept[tuple(ids)] = SimpleNamespace(cache=decode.copy_cache(cache, bundle), logits=logits.clone(),
                                                    prefill_ms=ms)

    store = Store()
    first, second = (Session(tiny, "The cat sat", prefill_cache=store) for _ in range(2))
    for s in (first, second):
        s.step(SamplingConfig(temperature=0))
    own = questions.inside_phases(Live(tiny, first, SamplingConfig())).answer
    copied = questions.inside_phases(Live(tiny, second, SamplingConfig())).answer
    assert own.startswith("Timed in this session: the prefill took **") and "another tab" not in own
    assert copied.startswith("Timed on this server: the prefill (timed when another tab first read this prompt; this "
                             "tab copied its cache) took **") and "Timed in this session" not in copied


def test_the_passes_check_says_which_tokens_its_one_pass_read(tiny, monkeypatch):
    """Past the most one pass reads: the run is named as the first tokens, and a prompt that fills them has no
    generated token to score (not "Nothing to score: 512 tokens, scoring from position 697")."""
    s = Session(tiny, "The cat sat on the")
    for _ in range(4):
        s.step(SamplingConfig(temperature=0))
    live = Live(tiny, s, SamplingConfig())
    whole = questions.inside_passes(live).answer
    assert "(ran it now: " in whole and "as many as one pass reads" not in whole
    from autoreg_core.experiments import teacher_forcing

    p = s.prompt_len
    monkeypatch.setattr(teacher_forcing, "MAX_TOKENS", p + 2)
    monkeypatch.setattr(questions, "MAX_TOKENS", p + 2)
    cut = questions.inside_passes(live).answer
    assert f"(ran it now on the first {p + 2} tokens, as many as one pass reads here, so on 2 of the generated ones: " \
        in cut
    monkeypatch.setattr(teacher_forcing, "MAX_TOKENS", p)
    monkeypatch.setattr(questions, "MAX_TOKENS", p)
    with pytest.raises(ValueError, match=f"the prompt fills the {p} tokens one pass reads here, so no generated token"):
        questions.inside_passes(live)
