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
    assert any(m.startswith("A temperature-0 API is an argmax") for m in said)
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
