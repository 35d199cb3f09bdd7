"""Predict, then check: every answer is computed from the live session or the model's shape, and graded."""
import re

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_ui import format, messages, predict
from autoreg_ui import predict_text as text
from autoreg_ui.lessons.attention import questions as attention
from autoreg_ui.lessons.attention import text as attention_text
from autoreg_ui.lessons.cost import questions as cost
from autoreg_ui.lessons.inside import questions as inside
from autoreg_ui.lessons.sampling import questions as sampling
from autoreg_ui.lessons.serving import questions as serving
from autoreg_ui.lessons.serving import text as serving_text
from autoreg_ui.lessons.step import questions as step
from autoreg_ui.lessons.tokens import questions as tokens
from autoreg_ui.lessons.tokens import text as tokens_text
from autoreg_ui.predict import Live


@pytest.fixture
def live(tiny):
    s = Session(tiny, "The cat sat")
    for _ in range(4):
        s.step(SamplingConfig(temperature=0), capture_attention=True)  # as the attention page steps
    return Live(tiny, s, SamplingConfig())


LESSON_PAGES = ("step", "attention", "sampling", "cost", "inside", "serving", "tokens")
QUESTIONS = {"step": step.QUESTIONS, "attention": attention.QUESTIONS, "sampling": sampling.QUESTIONS,
             "cost": cost.QUESTIONS, "inside": inside.QUESTIONS, "serving": serving.QUESTIONS,
             "tokens": tokens.QUESTIONS}


def test_every_question_fills_its_words_and_grades_an_answer(live):
    assert set(LESSON_PAGES) == set(QUESTIONS)
    for page, questions in QUESTIONS.items():
        assert 3 <= len(questions), page
        assert len({q.key for q in questions}) == len(questions), page
        for q in questions:
            ask, choices = q.ask(live)
            checked = q.check(live)
            assert 0 <= checked.right < len(choices), (page, q.key)
            assert "{" not in ask + checked.answer and all("{" not in c for c in choices), (page, q.key)
            assert predict.verdict(q, live, checked.right).startswith(f"**{text.CORRECT}**")
            wrong = (checked.right + 1) % len(choices)
            assert predict.verdict(q, live, wrong).startswith(f"**{text.NOT_QUITE}**")


def test_step_top_reads_the_models_own_next_distribution(live):
    probs = live.session.next_pipeline(live.config).raw_probs
    p = float(probs.max())
    checked = step.step_top(live)
    assert checked.right == (0 if p > 0.5 else 1)
    assert f"**{format.p_is(p)}**" in checked.answer


def test_top_p_counts_the_smallest_nucleus(live):
    probs = live.session.next_pipeline(SamplingConfig()).raw_probs
    sorted_probs = torch.sort(probs, descending=True).values
    nucleus = int((torch.cumsum(sorted_probs, 0) < 0.9).sum()) + 1  # the smallest set reaching 0.9
    checked = sampling.sampling_top_p(live)
    assert f"**{nucleus:,}** tokens" in checked.answer
    assert checked.right == predict.bucket(nucleus, (1, 10, 100))


def test_the_newest_query_saw_the_earlier_keys_plus_its_own_read_from_its_row(live):
    s = live.session
    pos = s.cache_len - 1
    assert s.records[-1].attention.shape[-1] == pos + 1  # what the model computed: one weight per cached key
    checked = attention.attention_keys(live)
    assert checked.right == 1 and checked.answer.startswith(f"**{pos + 1:,}**, read just now")
    ask, choices = QUESTIONS["attention"][0].ask(live)
    assert choices == (f"{pos:,}", f"{pos + 1:,}", "just 1") and f"position {pos:,} of the cache" in ask


def test_the_keys_answer_follows_the_row_not_the_cache(live, monkeypatch):
    s = live.session
    rec = s.records[-1]
    monkeypatch.setattr(rec, "attention", rec.attention[:, :, :1])  # a row of one weight: the third choice
    assert attention.attention_keys(live).right == 2
    monkeypatch.setattr(rec, "attention", None)  # a step taken on another page: nothing to read
    said = predict.verdict(QUESTIONS["attention"][0], live, 1)
    assert said == text.FAILED.format(error=messages.plain(attention_text.CHECK_NOT_CAPTURED))


def test_the_focus_answer_reads_the_newest_row_of_the_middle_layer(live):
    from autoreg_core.experiments import attention_rows as av

    pos, row = av.latest_row(live.session)
    layer = live.bundle.spec.n_layers // 2
    mean = row[layer].mean(dim=0)
    checked = attention.attention_focus(live)
    top = int(mean.argmax())
    assert f"is **{float(mean[top]):.1%}**, on position {top} " in checked.answer
    assert checked.right == (0 if float(mean[top]) > 0.5 else 1)
    assert (attention_text.FOCUS_ON_FIRST in checked.answer) == (top == 0)


def test_step_entropy_is_the_models_own_softmax_in_bits(live):
    probs = live.session.next_pipeline(live.config).raw_probs.double()
    bits = float(-(probs[probs > 0] * probs[probs > 0].log2()).sum())
    checked = step.step_entropy(live)
    assert checked.answer.startswith(f"**{bits:.2f} bits**") and f"about **{2 ** bits:,.1f}** tokens" in checked.answer
    assert checked.right == predict.bucket(bits, (1, 4))


def test_top_k_renormalising_never_lowers_the_top_token(live):
    probs = live.session.next_pipeline(SamplingConfig()).raw_probs
    top5 = torch.topk(probs, 5).values
    checked = sampling.sampling_top_k(live)
    assert f"**{float(top5[0]):.1%}** in the raw softmax, **{float(top5[0] / top5.sum()):.1%}** after" in checked.answer
    assert checked.right == (0 if float(top5[0] / top5.sum()) > float(top5[0]) + 5e-4 else 1)


def test_cost_answers_are_this_models_formulas(live):
    spec = live.bundle.spec
    ratio = spec.flops_step(1024, cached=False) / spec.flops_step(1024, cached=True)
    assert f"**{ratio:,.0f}×**" in cost.cost_flops(live).answer
    growth = spec.flops_step(2048, cached=True) / spec.flops_step(128, cached=True) - 1
    assert f"**{growth:.0%}**" in cost.cost_growth(live).answer
    ask, _ = QUESTIONS["cost"][1].ask(live)
    assert "more arithmetic" in ask and "slower" not in ask  # the answer counts FLOPs, so the question asks for them
    share = spec.attention_flops_per_key * 2048 / spec.flops_step(2048, cached=True)
    checked = cost.cost_share(live)
    assert checked.answer.startswith(f"**{share:.0%}** for this model") and checked.right == predict.bucket(
        share, (0.1, 0.3, 0.6))


def test_serving_answers_say_which_side_is_larger_from_the_numbers(tiny, live):
    from autoreg_core.experiments.roofline import step_budget

    spec = tiny.spec
    weights, caches = spec.weight_bytes, spec.cache_bytes(2048, batch=32)
    memory = serving.serving_memory(live)
    expected = (serving_text.WEIGHTS_LARGER.format(times=weights / caches) if weights > caches
                else serving_text.CACHES_LARGER.format(times=caches / weights))
    assert memory.answer.endswith(expected) and memory.right == (0 if weights > caches else 1)
    one = step_budget(spec, 1, 256)
    batch = serving.serving_crossover(live)
    first = next(b for b in range(1, 10 ** 6) if b * one.cache_bytes > one.weight_bytes)
    assert batch.answer.startswith(f"From **{first:,}** sequences")
    assert batch.right == predict.bucket(first, (10, 100, 1000))


def test_inside_phases_compares_this_sessions_own_timings(live, monkeypatch):
    s = live.session
    for rec in s.records:
        monkeypatch.setattr(rec, "forward_ms", 10.0)
    monkeypatch.setattr(s.prefill_record, "time_ms", 30.0)  # 3 prompt tokens at 10 ms each
    checked = inside.inside_phases(live)
    assert checked.right == 0 and f"took **30.0 ms** for {s.prefill_record.n_tokens} tokens" in checked.answer
    monkeypatch.setattr(s.prefill_record, "time_ms", 11.0)
    assert inside.inside_phases(live).right == 2  # within 25%
    monkeypatch.setattr(s.prefill_record, "time_ms", 2.0)
    assert inside.inside_phases(live).right == 1


def test_the_emoji_is_counted_by_the_tokenizer(tiny, live):
    ids = tiny.tokenizer("🐈", add_special_tokens=False)["input_ids"]
    checked = tokens.tokens_emoji(live)
    assert checked.answer.startswith(f"**{len(ids)}**, tokenized now: ")
    assert all(f"(id {i})" in checked.answer for i in ids)
    assert checked.right == predict.bucket(len(ids), (1, 4))
    assert (tokens_text.EMOJI_ONE_PIECE in checked.answer) == (len(ids) == 1)


def test_teacher_forcing_check_runs_one_pass_and_matches_the_steps(live):
    checked = inside.inside_passes(live)
    gap = float(re.search(r"to \*\*([0-9.e+-]+)\*\* nats", checked.answer).group(1))
    assert checked.right == 0 and gap < 1e-3


def test_buckets_are_closed_on_the_right():
    assert [predict.bucket(v, (1, 10, 100)) for v in (1, 2, 10, 11, 100, 101)] == [0, 1, 1, 2, 2, 3]


def test_a_check_that_needs_a_session_says_so_and_a_failed_check_says_why(tiny):
    q = QUESTIONS["step"][0]
    assert predict.verdict(q, Live(tiny, None, SamplingConfig()), 0) == text.NO_SESSION
    fresh = Live(tiny, Session(tiny, "The cat"), SamplingConfig())
    assert predict.verdict(QUESTIONS["inside"][0], fresh, 0).startswith("This check could not run")


@pytest.mark.parametrize("is_open", [True, False], ids=["open", "closed"])
def test_show_keys_each_widget_by_page_and_question_and_checks_only_what_was_picked(live, monkeypatch, is_open):
    drawn = []

    class Box:
        open = is_open

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def radio(ask, options, format_func, index, key):
        drawn.append(("radio", key, ask, tuple(format_func(i) for i in options), index))
        return 0 if key.startswith("predict_cost_growth") else None

    fake_st = type("St", (), {"expander": staticmethod(lambda title, icon, key, on_change:
                                                       drawn.append(("box", title, key)) and None or Box()),
                              "caption": staticmethod(lambda t: drawn.append(("caption", t))),
                              "radio": staticmethod(radio),
                              "markdown": staticmethod(lambda t: drawn.append(("verdict", t)))})
    monkeypatch.setattr(predict, "st", fake_st)
    predict.show("cost", QUESTIONS["cost"], live)
    if not is_open:  # a closed box draws nothing inside it and checks nothing
        assert drawn == [("box", text.TITLE, "predict_box" + "cost")]
        return
    assert drawn[:2] == [("box", text.TITLE, "predict_box" + "cost"), ("caption", text.INTRO)]
    radios = [d[1:] for d in drawn if d[0] == "radio"]
    at = f"_at{len(live.session.records)}" if live.session.records else ""  # asked afresh at each step
    assert [r[0] for r in radios] == [f"predict_cost_{k}{at}" for k in ("flops", "growth", "share")]
    assert [r[1:3] for r in radios] == [q.ask(live) for q in QUESTIONS["cost"]]
    assert all(r[3] is None for r in radios)  # nothing is picked for the learner
    verdicts = [d[1] for d in drawn if d[0] == "verdict"]
    assert verdicts == [predict.verdict(QUESTIONS["cost"][1], live, 0)]  # only the picked one is checked


def test_each_step_asks_afresh_under_a_key_of_its_own():
    question = QUESTIONS["cost"][0]
    assert predict.radio_key("step", question, 0) == f"predict_step_{question.key}"  # as before: links and tests
    assert predict.radio_key("step", question, 3) == f"predict_step_{question.key}_at3"
    assert predict.radio_key("step", question, 3) != predict.radio_key("step", question, 4)
    assert text.ASKED_AT.format(step=3).startswith("These questions are about step 3;")
