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
    assert f"In this text's first {read} tokens" in ask and f"the {p} prompt tokens or the 2 the model" in ask
    assert "the 2 generated tokens have a mean loss" in questions.loss_parts(live).answer.lower()
    scored = text_loss(tiny, session.ids[:read], p)
    said = questions.perplexity(live).answer
    assert f"one pass over {read} tokens" in said and f"perplexity **{scored.perplexity:,.1f}**" in said

    monkeypatch.setattr(controller, "MAX_READ", p)  # the prompt alone fills the pass
    with pytest.raises(ValueError, match="the prompt fills the"):
        questions.loss_parts(live)
