"""The "More serving tricks" page under Streamlit's AppTest, on the tiny model: its three sections, each
measurement run from its button, the numbers it shows, and the predict-then-check questions answered."""
from __future__ import annotations

import json

import pytest
from clicks import click as _click

from autoreg_core.experiments import constrained_decoding as grammar
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_ui import keys
from autoreg_ui.lessons.tricks import keys as tricks_keys
from autoreg_ui.lessons.tricks import text

PAGE = "pages/tricks.py"


@pytest.fixture
def page(open_page):
    return open_page(PAGE)




def _table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _charts(at) -> dict[str, dict]:
    """Each drawn chart's figure (JSON) by the key we gave it (element ids are '$$ID-<hash>-<key>')."""
    return {el.proto.id.split("-", 2)[-1]: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def _in_order(node):
    """The page's elements in the order they are drawn (blocks opened), each as (type, key or id)."""
    children = getattr(node, "children", None)
    if children is None:
        yield node.type, getattr(node.proto, "id", "")
        return
    for i in sorted(children):
        yield from _in_order(children[i])


def _names(fig: dict) -> list[str]:
    return [t["name"] for t in fig["data"]]


def test_before_a_measurement_the_what_if_chart_is_the_sliders_alone(page):
    charts = _charts(page)
    assert list(charts) == [tricks_keys.TRICKS_WHATIF_FIG]
    assert _names(charts[tricks_keys.TRICKS_WHATIF_FIG]) == [text.WHATIF_CURVE, f"best k for {text.WHATIF_CURVE}"]


def test_the_measured_curves_are_drawn_under_the_button(page):
    """After the α/c run: a chart of its own right under the run button (before the table), each measured prompt ·
    draft as a curve with its best k starred, the sliders' curve first; the what-if chart above keeps only the
    sliders' curve."""
    page.slider(key=tricks_keys.TRICKS_SPEC_MAX_NEW).set_value(16)
    _click(page, tricks_keys.TRICKS_SPEC.run)
    table = _table(page, "speed-up, measured")
    charts = _charts(page)
    assert list(charts) == [tricks_keys.TRICKS_WHATIF_FIG, tricks_keys.TRICKS_SPEC_FIG, tricks_keys.TRICKS_SPEC_BARS]
    assert _names(charts[tricks_keys.TRICKS_WHATIF_FIG]) == [text.WHATIF_CURVE, f"best k for {text.WHATIF_CURVE}"]
    measured = charts[tricks_keys.TRICKS_SPEC_FIG]
    labels = [text.WHATIF_CURVE_BESIDE] + [f"{p} · {d}" for p, d in zip(table["prompt"], table["draft"])]
    assert _names(measured) == [name for label in labels for name in (label, f"best k for {label}")]
    stars = measured["data"][1::2]
    assert [star["x"][0] for star in stars[1:]] == list(table["best k"])  # each draft's best k, starred
    whatif = spec_math.best_k(0.7, 0.1)  # the sliders' defaults
    assert measured["data"][0]["y"] == list(whatif.curve) and stars[0]["x"] == [whatif.k]
    assert all(len(curve["y"]) == spec_math.MAX_K for curve in measured["data"][0::2])
    drawn = [(kind, key.split("-", 2)[-1]) for kind, key in _in_order(page.main)
             if kind in ("button", "plotly_chart", "dataframe")]
    stop = drawn.index(("button", tricks_keys.TRICKS_SPEC.stop))
    spec = tricks_keys.TRICKS_SPEC
    assert drawn[stop - 1:stop + 3] == [("button", spec.run), ("button", spec.stop),
                                        ("plotly_chart", tricks_keys.TRICKS_SPEC_FIG), ("dataframe", "")]


def test_page_before_any_measurement(page):
    assert page.title[0].value == text.TITLE
    assert [h.value for h in page.main.header] == [text.SPEC_TITLE, text.PREFIX_TITLE, text.GRAMMAR_TITLE]
    labels = [m.label for m in page.metric]
    assert labels == list(text.prefix_stat_labels())
    said = " ".join(m.value for m in page.markdown)
    assert ("**What if**: with α = 0.70 and c = 0.10, the formula (verify counted as one decode step) predicts k = "
            in said)  # the what-if sentence from the sliders


def test_the_what_if_sliders_move_the_best_k(page):
    page.slider(key=tricks_keys.TRICKS_WHATIF_ALPHA).set_value(0.1)
    page.slider(key=tricks_keys.TRICKS_WHATIF_C).set_value(0.5)
    page.run()
    said = " ".join(m.value for m in page.markdown)
    assert "finds no draft length that pays: the best, k = 1, is predicted at 0.73×" in said


def test_each_measurement_runs_and_shows_its_numbers(page):
    page.slider(key=tricks_keys.TRICKS_SPEC_MAX_NEW).set_value(16)
    _click(page, tricks_keys.TRICKS_SPEC.run)
    table = _table(page, "speed-up, measured")
    assert list(table["prompt"]) == ["copying a text", "copying a text", "open-ended", "open-ended"]
    assert list(table["draft"]) == ["prompt lookup (2-gram)", "early exit after layer 1"] * 2  # of the tiny model's 2
    assert (table["tokens per round, measured"] >= 1).all() and (table["best k"] >= 1).all()
    # α per tested guess is never below kept ÷ drafted (the untested guesses after a rejection only add drafted ones)
    assert (table["α = kept ÷ tested"] >= table["kept ÷ drafted (draft acceptance rate)"]).all()
    assert (table["rounds with all k guesses"] <= table["rounds"]).all()
    said = " ".join(m.value for m in page.markdown)
    assert said.count("tokens per round measured") == len(table)
    page.slider(key=tricks_keys.TRICKS_PREFIX_TABS).set_value(3)
    _click(page, tricks_keys.TRICKS_PREFIX.run)
    said = " ".join(m.value for m in page.markdown)
    assert "3 tabs:" in said and "(1 prefill and 2 copies from the store)" in said
    assert "every tab's logits are bit for bit a fresh prefill's (a hit's cache is a copy of the stored one)" in said
    page.radio(key=tricks_keys.TRICKS_GRAMMAR_KIND).set_value(grammar.CHOICE)
    page.run()
    _click(page, tricks_keys.TRICKS_GRAMMAR.run)
    steps = _table(page, "allowed tokens")
    assert len(steps) >= 1 and steps["allowed tokens"].min() >= 1
    assert any("**Valid** under the choice" in m.value for m in page.markdown)


def test_the_questions_are_answered_live(page):
    from autoreg_ui.lessons.tricks import questions

    assert len(questions.QUESTIONS) >= 6
    page.session_state[keys.PREDICT_BOX + "tricks"] = True  # the learner opens the box: its questions are drawn
    page.run()
    for q in questions.QUESTIONS:
        if q.needs_session:
            continue
        page.radio(key=f"predict_tricks_{q.key}").set_value(0)
        page.run()
        assert not page.exception, page.exception
    said = " ".join(m.value for m in page.markdown)
    assert "**3.36** tokens" in said and "**k = " in said and "tokens: the beginnings" in said
