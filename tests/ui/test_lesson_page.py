"""The head every lesson page shares, written once: what it draws, in the order the pages drew it themselves."""
from types import SimpleNamespace

import pytest

from autoreg_ui import lesson_page
from autoreg_ui.lessons.step import questions as step_questions
from autoreg_ui.lessons.tokens import text as tokens_text

BUNDLE = object()


@pytest.fixture
def drawn(monkeypatch):
    calls = []
    fake_st = SimpleNamespace(title=lambda t: calls.append(("title", t)),
                              caption=lambda t: calls.append(("caption", t)),
                              latex=lambda t: calls.append(("latex", t)), session_state={})
    monkeypatch.setattr(lesson_page, "st", fake_st)
    monkeypatch.setattr(lesson_page.glossary, "terms_here", lambda page: calls.append(("terms", page)))
    monkeypatch.setattr(lesson_page.predict, "show", lambda page, qs: calls.append(("predict", page, qs)))
    # a page with a Next token draws its box there (controls.step_buttons), in the same place of the head's order
    monkeypatch.setattr(lesson_page.predict, "defer", lambda page, qs: calls.append(("predict", page, qs)))
    monkeypatch.setattr(lesson_page.presenter, "active", lambda: False)
    monkeypatch.setattr(lesson_page.guide, "show", lambda guides, view: calls.append(("guide", view, guides)))
    monkeypatch.setattr(lesson_page, "explain", lambda t: calls.append(("explain", t)))
    monkeypatch.setattr(lesson_page, "bundle_or_stop", lambda: calls.append(("bundle",)) or BUNDLE)
    return calls


def test_a_lesson_page_head_is_title_terms_questions_intro_then_the_model(drawn):
    assert lesson_page.set_up("Sampling lab", "sampling", step_questions.QUESTIONS, "Intro.") is BUNDLE
    assert drawn == [("title", "Sampling lab"), ("terms", "sampling"),
                     ("predict", "sampling", step_questions.QUESTIONS), ("explain", "Intro."), ("bundle",)]


def test_the_step_page_shows_its_formula_and_the_attention_page_a_caption_before_the_model(drawn):
    lesson_page.set_up("Step through generation", "step", (), "Loop.", latex="p(x)")
    assert [c[0] for c in drawn] == ["title", "terms", "predict", "explain", "latex", "bundle"]
    drawn.clear()
    lesson_page.set_up("Attention and the KV cache", "attention", (), caption="Caption.")
    assert drawn[3:] == [("caption", "Caption."), ("bundle",)] and ("explain", None) not in drawn


def test_the_tokens_page_shows_its_own_box_right_under_its_title(drawn):
    lesson_page.set_up(tokens_text.TITLE, "tokens", (), tokens_text.INTRO, guides=tokens_text.GUIDES)
    assert drawn[:3] == [("title", tokens_text.TITLE), ("guide", "tokens", tokens_text.GUIDES), ("terms", "tokens")]
    assert "tokens" in tokens_text.GUIDES


def test_the_model_comes_last_so_a_page_without_one_still_shows_its_head(drawn, monkeypatch):
    class Stopped(Exception):
        pass

    def stop():
        drawn.append(("bundle",))
        raise Stopped

    monkeypatch.setattr(lesson_page, "bundle_or_stop", stop)
    with pytest.raises(Stopped):
        lesson_page.set_up("Inside generation", "inside", (), "Intro.")
    assert [c[0] for c in drawn] == ["title", "terms", "predict", "explain", "bundle"]


def test_an_introduction_shows_its_first_paragraph_and_folds_the_rest():
    from autoreg_ui.lesson_page import first_paragraph

    assert first_paragraph("One.\n\nTwo.\n\nThree.") == ("One.", "Two.\n\nThree.")
    assert first_paragraph("  Only one.\nStill one.  ") == ("Only one.\nStill one.", "")
