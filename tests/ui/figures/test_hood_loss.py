"""The loss chart names the predicted tokens under its bars; its table has no empty-number cell printed as None."""
from autoreg_core import SamplingConfig, Session
from autoreg_core.experiments.training_loss import text_loss
from autoreg_ui.lessons.hood import controller as hood
from autoreg_ui.lessons.hood import figures


def test_the_loss_chart_shows_the_tokens_escaped_and_places_past_the_limit():
    labels = ["·The", "<b>", "·a very long token"]
    fig = figures.loss_figure(labels, [1.0, 2.0, 3.0], 2, [3.0])
    assert list(fig.layout.xaxis.tickvals) == [2, 3, 4]
    assert list(fig.layout.xaxis.ticktext) == ["·The", "&lt;b&gt;", "·a very l…"]
    many = [f"t{i}" for i in range(figures.MAX_NAMED_TOKENS + 1)]
    assert figures.token_ticks(many) is None and figures.token_ticks(many[:-1]) == many[:-1]
    wide = figures.loss_figure(many, [1.0] * len(many), 2, [])
    assert wide.layout.xaxis.ticktext is None and wide.layout.xaxis.tickformat == "d"


def test_the_loss_table_marks_a_prompt_tokens_missing_record_with_a_dash(tiny):
    session = Session(tiny, "The cat sat")
    session.step(SamplingConfig(temperature=0))
    ids = list(session.ids)
    scored = text_loss(tiny, ids, session.prompt_len)
    rows = hood.loss_rows(tiny.tokenizer, scored, session.records)
    column = [row["−log p, recorded by the step"] for row in rows]
    assert len(column) == len(ids) - 1 and None not in column
    assert column[:-1] == [hood.NO_RECORD] * (len(ids) - 2)
    assert column[-1] == f"{-session.records[0].logprob:.5f}"
