"""The "Under the hood" page under Streamlit's AppTest, on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

import pytest
from clicks import click as _click
from conftest import ROOT

from autoreg_ui import keys
from autoreg_ui.lessons.hood import keys as hood_keys
from autoreg_ui.lessons.hood import text

PAGE = "pages/hood.py"


@pytest.fixture
def page(open_page):
    return open_page(PAGE)




def _open(at, label: str) -> None:
    at.session_state[hood_keys.HOOD_SECTION] = label
    at.run()
    assert not at.exception, at.exception


def _markdown(at) -> list[str]:
    return [m.value for m in at.markdown]


def test_the_loss_section_scores_the_tabs_text_and_matches_the_steps(page):
    assert page.title[0].value == text.TITLE
    for _ in range(3):
        _click(page, f"{hood_keys.HOOD_PAGE}_next")
    session = page.session_state[keys.SESSION]
    assert len(session.records) == 3
    _click(page, hood_keys.HOOD_LOSS.run)
    metrics = {m.label: m.value for m in page.metric}
    assert metrics["Terms from one pass"] == f"{len(session.ids) - 1:,}"
    assert float(metrics["Largest gap to the records"].split()[0]) < 1e-4
    rows = [d.value for d in page.dataframe if "−log p, one pass" in d.value.columns][0]
    assert list(rows["part"]) == ["prompt"] * (session.prompt_len - 1) + ["generated"] * 3
    assert any(m.startswith("For the 3 generated tokens, each one-pass term equals") for m in _markdown(page))


def test_the_section_labels_are_the_lessons_and_each_opens(page):
    import ast

    source = (ROOT / "autoreg_ui" / "lessons" / "hood" / "page.py").read_text()
    labels = [k.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assign)
              and getattr(node.targets[0], "id", "") == "SECTIONS" for k in node.value.keys]
    assert labels == [text.LOSS, text.POSITIONS, text.DETERMINISM] == list(text.GUIDES)
    assert [t.label for t in page.tabs] == labels


def test_the_positions_section(page):
    for _ in range(2):
        _click(page, f"{hood_keys.HOOD_PAGE}_next")
    _open(page, text.POSITIONS)
    session = page.session_state[keys.SESSION]
    n = len(session.ids)
    rows = [d.value for d in page.dataframe if "position ids" in d.value.columns][0]
    assert list(rows["pass"]) == ["prefill", "step 1", "step 2"]
    assert list(rows["position ids"]) == [f"0 … {session.prompt_len - 1}", str(session.prompt_len),
                                          str(session.prompt_len + 1)]
    assert any(f"uses position **{n}**" in m for m in _markdown(page))
    page.number_input(key=hood_keys.HOOD_KEY_POS).set_value(2)
    page.number_input(key=hood_keys.HOOD_KEY_LAYER).set_value(1)
    page.run()
    _click(page, hood_keys.HOOD_KEY.run)
    assert any(m.startswith("Layer 1, position 2:") and "equals the cache entry" in m for m in _markdown(page))
    _click(page, hood_keys.HOOD_SHIFT.run)
    assert any(m.startswith("Feeding only the last token 1 position late") for m in _markdown(page))
    _click(page, hood_keys.HOOD_PAD.run)
    pad = [d.value for d in page.dataframe if "pad columns" in d.value.columns][0]
    assert list(pad["real tokens cached"]) == [n - 1, n + 15]
    assert list(pad["position id the batcher feeds"]) == [n - 1, n + 15]
    assert list(pad["position if columns were counted"]) == [n + 15, n + 15]
    said = [m for m in _markdown(page) if m.startswith("This check caches your text without its last token")]
    assert len(said) == 1 and f"Your row has {n - 1:,} real tokens cached" in said[0]
    assert f"feeds your last token at position **{n - 1:,}**" in said[0]  # the text's n tokens: n − 1 before the last


def test_the_determinism_section_and_a_bounded_search(page, monkeypatch):
    from autoreg_ui.lessons.hood import controller as hood

    _click(page, f"{hood_keys.HOOD_PAGE}_next")
    _open(page, text.DETERMINISM)
    _click(page, hood_keys.HOOD_BATCH.run)
    said = _markdown(page)
    assert any(m.startswith("For step 1 (the one that chose its token): computed alone and as one row of 2, 4, 8-row")
               for m in said)
    assert any(m.startswith("A temperature-0 API takes the argmax") and "here (CPU, float32)" in m for m in said)
    monkeypatch.setattr(hood, "SEARCH_STEPS_EACH", 1)  # the page reads the bounds when it runs
    _click(page, hood_keys.HOOD_SEARCH.run)
    assert any("**No flip found.** Searched 6 texts, 6 greedy steps, 18 shared passes." in m
               or m.startswith("**Found one.**") for m in _markdown(page))


def test_every_question_is_answered_live(page):
    from autoreg_ui import predict_text
    from autoreg_ui.lessons.hood import questions
    from autoreg_ui.predict import Live, verdict
    from autoreg_ui.state import SamplingConfig

    for _ in range(3):
        _click(page, f"{hood_keys.HOOD_PAGE}_next")
    session = page.session_state[keys.SESSION]
    live = Live(session.bundle, session, SamplingConfig())
    assert len(questions.QUESTIONS) >= 6
    for question in questions.QUESTIONS:
        checked = question.check(live)
        ask, choices = question.ask(live)
        assert 0 <= checked.right < len(choices) and "{" not in ask + checked.answer, question.key
        assert verdict(question, live, checked.right).startswith(f"**{predict_text.CORRECT}**")
    position = questions.next_position(live).answer
    assert position.startswith(f"**{len(session.ids):,}**")


@pytest.mark.parametrize("steps", [8, 9, 11])
def test_the_position_table_folds_older_steps_into_one_row_without_a_gap(tiny, steps):
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.lessons.hood import controller

    session = Session(tiny, "The cat sat on the")
    session.prefill()
    for _ in range(steps):
        session.step(SamplingConfig(temperature=0.0))
    rows = controller.position_rows(tiny.tokenizer, session)
    p = session.prompt_len
    folded = steps - controller.RECENT_STEPS
    expected = [("prefill", p, f"0 … {p - 1}")]
    if folded == 1:
        expected.append(("step 1", 1, str(p)))
    elif folded > 1:
        expected.append((f"steps 1 … {folded}", folded, f"{p} … {p + folded - 1}"))
    expected += [(f"step {i}", 1, str(p + i - 1)) for i in range(folded + 1, steps + 1)]
    assert [(r["pass"], r["tokens fed"], r["position ids"]) for r in rows] == expected
    assert sum(r["tokens fed"] for r in rows) == len(session.ids)  # every token fed once, no gap


def test_questions_count_the_tokens_their_checks_read(tiny, monkeypatch):
    """Past the most one pass reads, each question's words and its answer count the same tokens: the next position
    is the whole text's, the checks say which tokens they ran on (the loss the first ones, as the page scores)."""
    from autoreg_core import SamplingConfig, Session
    from autoreg_core.experiments.training_loss import text_loss
    from autoreg_ui.lessons.hood import controller, questions
    from autoreg_ui.predict import Live

    session = Session(tiny, "The cat sat on the")
    for _ in range(6):
        session.step(SamplingConfig(temperature=0.0))
    live = Live(tiny, session, SamplingConfig())
    n, p = len(session.ids), session.prompt_len
    by_key = {q.key: q for q in questions.QUESTIONS}

    ask, _ = by_key["flip"].ask(live)
    assert "Could one of the shared passes this page measures (2, 4 and 8 rows, the app's example texts as the " \
           "other tabs) change its greedy token?" in ask
    whole = questions.next_position(live).answer  # everything read: no cut to name
    assert whole.startswith(f"**{n:,}**") and f"Checked on the step that fed the last token at {n - 1}:" in whole

    read = p + 2
    monkeypatch.setattr(controller, "MAX_READ", read)
    ask, choices = by_key["position"].ask(live)
    assert f"The text has {n:,} tokens" in ask and choices == (f"{n - 1:,}", f"{n:,}", f"{n + 1:,}")
    cut = questions.next_position(live).answer
    assert cut.startswith(f"**{n:,}**: positions count from 0, so the cache holds 0 … {n - 1:,}.")
    assert f"the last {read} tokens (as many as one pass reads here), read as a text of their own" in cut
    assert f"their last token at {read - 1}" in cut
    ask, _ = by_key["whole_shift"].ask(live)
    assert ask.startswith(f"Shift every position of this text's last {read} tokens (as many as one pass reads here) "
                          f"by one (1 … {read} instead of 0 … {read - 1})")
    ask, _ = by_key["loss_parts"].ask(live)
    assert f"In this text's first {read} tokens" in ask and f"the prompt's {p - 1} scored tokens" in ask
    assert "or the 2 added after it" in ask
    assert "the 2 tokens added after the prompt have a mean loss" in questions.loss_parts(live).answer.lower()
    scored = text_loss(tiny, session.ids[:read], p)
    said = questions.perplexity(live).answer
    assert f"one pass over {read} tokens" in said and f"perplexity **{scored.perplexity:,.1f}**" in said

    monkeypatch.setattr(controller, "MAX_READ", p)  # the prompt alone fills the pass
    with pytest.raises(ValueError, match="the prompt fills the"):
        questions.loss_parts(live)


def test_the_loss_question_names_scored_tokens_and_why_it_cannot_answer(tiny):
    """The prompt's mean covers all its tokens but the first; a one-token prompt has no term, which no step gives."""
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.lessons.hood import questions
    from autoreg_ui.predict import Live

    by_key = {q.key: q for q in questions.QUESTIONS}
    session = Session(tiny, "The cat sat on the")
    p = session.prompt_len
    session.prefill()
    live = Live(tiny, session, SamplingConfig())
    with pytest.raises(ValueError, match="press Next token first: the question compares the tokens added after"):
        questions.loss_parts(live)
    session.step(SamplingConfig(temperature=0.0))
    ask, choices = by_key["loss_parts"].ask(live)
    assert f"the prompt's {p - 1} scored tokens (all but its first) or the 1 added after it (generated or forced)?" \
        in ask and choices[1] == "the added ones"
    single = Session(tiny, "The")
    assert single.prompt_len == 1
    for _ in range(2):
        single.step(SamplingConfig(temperature=0.0))
    with pytest.raises(ValueError, match="the prompt is one token, so it has no term of its own to compare"):
        questions.loss_parts(Live(tiny, single, SamplingConfig()))
    assert by_key["loss_parts"].ask(Live(tiny, single, SamplingConfig()))[0].count("the prompt's 0 scored") == 1


def test_the_whole_shift_answer_names_rounding_at_the_models_precision(tiny):
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.lessons.hood import questions
    from autoreg_ui.predict import Live

    session = Session(tiny, "The cat sat on the")
    said = questions.whole_shift(Live(tiny, session, SamplingConfig())).answer
    assert ("so in exact arithmetic nothing would move. What moves is rounding: the shifted angles have other sines "
            "and cosines, and the model computes in float32, which keeps 24 significant bits.") in said


def test_the_controller_counts_picks_fills_and_cuts(tiny, monkeypatch):
    from autoreg_core import SamplingConfig, Session
    from autoreg_core.experiments.training_loss import text_loss
    from autoreg_ui.lessons.hood import controller

    session = Session(tiny, "The cat sat on the")
    session.step(SamplingConfig(temperature=0.0))
    session.force(session.ids[1], SamplingConfig(temperature=0.0))
    session.step(SamplingConfig(temperature=0.0))
    assert controller.picks(session.records) == (1, 0)
    below = [type("R", (), {"forced": False, "rank": r})() for r in (1, 2, 7)]
    assert controller.picks(below) == (0, 2)
    n, p = len(session.ids), session.prompt_len
    assert controller.prompt_fills(n, text_loss(tiny, session.ids, p)) == 0  # generated tokens scored
    assert controller.prompt_fills(n, text_loss(tiny, session.ids[:p], p)) == p  # the prompt alone filled the pass
    assert controller.prompt_fills(p, text_loss(tiny, session.ids[:p], p)) == 0  # nothing generated: nothing cut
    context = session.records[-1].context_len
    assert controller.step_cut(session) == 0
    monkeypatch.setattr(controller, "MAX_READ", context)
    assert controller.step_cut(session) == 0 and len(controller.last_step(session)[0]) == context
    monkeypatch.setattr(controller, "MAX_READ", context - 1)
    assert controller.step_cut(session) == context - 1
    ids, index = controller.last_step(session)
    assert ids == session.ids[1:context] and index == 3


def _step_result(gap: float, delta: float, flipped: bool):
    from autoreg_core.experiments.batch_invariance import SizeResult, StepInvariance

    return StepInvariance(1, 2, gap, [SizeResult(2, delta, 1), SizeResult(4, delta, 2 if flipped else 1)], 20.3)


@pytest.mark.parametrize("gap, delta, flipped, right", [(1e-5, 3e-5, True, 0), (1e-5, 3e-5, False, 1),
                                                        (0.0, 0.0, False, 1), (2.0, 1e-4, False, 1)])
def test_the_flip_question_is_answered_by_what_the_measured_passes_did(tiny, monkeypatch, gap, delta, flipped,
                                                                       right):
    """"yes" only when a measured pass picked another top token: a gap within the bound alone is "could, for other
    companions"; gap 0 with no difference is "no", as its sentence says."""
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.lessons.hood import questions
    from autoreg_ui.predict import Live

    session = Session(tiny, "The cat sat on the")
    session.step(SamplingConfig(temperature=0.0))
    monkeypatch.setattr(questions, "step_invariance", lambda *a, **k: _step_result(gap, delta, flipped))
    checked = questions.could_flip(Live(tiny, session, SamplingConfig()))
    assert checked.right == right
    assert ("picked a top token other than the solo pass's" in checked.answer) == flipped
    assert checked.answer.startswith(f"Computed now: its top two logits are **{gap:.3g}** apart.")


def test_past_one_pass_the_step_questions_say_recomputed_and_show_no_recorded_gap(tiny, monkeypatch):
    from autoreg_core import SamplingConfig, Session
    from autoreg_ui.lessons.hood import controller, questions
    from autoreg_ui.predict import Live

    session = Session(tiny, "The cat sat on the")
    for _ in range(3):
        session.step(SamplingConfig(temperature=0.0))
    live = Live(tiny, session, SamplingConfig())
    by_key = {q.key: q for q in questions.QUESTIONS}
    gap = controller.recorded_gap(session)
    assert by_key["flip"].ask(live)[0].startswith(f"Your last step's top two logits are {gap:.3g} apart. Could")
    assert by_key["batch_diff"].ask(live)[0].startswith("Your last step computed alone")
    monkeypatch.setattr(controller, "MAX_READ", 4)
    ask = by_key["flip"].ask(live)[0]
    assert ask.startswith("Your last step, recomputed on its last 4 tokens read as a text of their own (as many as "
                          "one pass reads here). Could") and f"{gap:.3g}" not in ask
    assert by_key["batch_diff"].ask(live)[0].startswith(
        "Your last step, recomputed on its last 4 tokens read as a text of their own, computed alone")
    said = questions.could_flip(live).answer
    assert said.startswith("Computed now on its last 4 tokens, read as a text of their own: its top two logits are")


def test_the_difference_reading_follows_the_precision():
    import torch

    from autoreg_ui.lessons.hood import questions, text

    assert questions.diff_reading(0.0, torch.float32, 20.0) == text.DIFF_ZERO
    assert questions.diff_reading(9.99e-4, torch.bfloat16, 20.0) == text.DIFF_SMALL
    assert questions.diff_reading(1e-3, torch.float32, 20.0) == text.DIFF_FLOAT32
    bf16 = questions.diff_reading(0.344, torch.bfloat16, 20.3)
    assert "In bfloat16, which keeps 8 significant bits" in bf16 and "are 0.125 apart" in bf16 and "2.8 of" in bf16


def test_the_positions_checks_and_the_batch_step_say_when_they_read_a_cut_text(page, monkeypatch):
    from autoreg_ui.lessons.hood import controller as hood

    for _ in range(2):
        _click(page, f"{hood_keys.HOOD_PAGE}_next")
    _open(page, text.POSITIONS)
    assert not [c.value for c in page.caption if c.value.startswith("On the last")]
    n = len(page.session_state[keys.SESSION].ids)
    monkeypatch.setattr(hood, "MAX_READ", n - 1)
    page.run()
    cut = [c.value for c in page.caption if c.value.startswith("On the last")]
    assert cut == [text.cut_note(n - 1, n)] * 3
    _open(page, text.DETERMINISM)
    _click(page, hood_keys.HOOD_BATCH.run)  # step 2 read n − 1 tokens: not cut at n − 1
    assert any(m.startswith("For step 2 (the one that chose its token): computed alone") for m in _markdown(page))
    monkeypatch.setattr(hood, "MAX_READ", n - 2)
    _click(page, hood_keys.HOOD_BATCH.run)
    assert any(m.startswith(f"For step 2, recomputed on its last {n - 2} tokens read as a text of their own: "
                            "computed alone") for m in _markdown(page))
