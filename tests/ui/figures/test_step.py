"""Figure builders of the step page: plain asserts on the figure data."""
import html
import re

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_ui import format, palette
from autoreg_ui.step_figures import (
    HISTORY_COLUMNS,
    OTHER_LABEL,
    TopN,
    history_frame,
    logprob_figure,
    token_strip_html,
    top_of_pipeline,
    top_of_record,
    topn_figure,
)


def _session(tiny, prompt="The cat sat"):
    s = Session(tiny, prompt)
    s.generate(4, SamplingConfig(temperature=1.0, top_k=20, seed=3))
    return s


def test_topn_bars_sum_to_one_and_mark_the_chosen_token(tiny):
    s = _session(tiny)
    rec = s.records[-1]
    top = top_of_record(rec, 10)
    fig = topn_figure(tiny.tokenizer, top)
    before, after = fig.data
    assert before.x[-1] == OTHER_LABEL and len(before.x) == len(top.ids) + 1
    assert sum(before.y) == pytest.approx(1.0, abs=1e-5) and sum(after.y) == pytest.approx(1.0, abs=1e-5)
    idx = list(before.customdata).index(rec.token_id)
    colours = list(after.marker.color)
    assert colours.count(colours[idx]) == 1  # only the chosen bar has the highlight colour
    assert len(set(before.x)) == len(before.x)  # labels unique


def test_a_low_ranked_chosen_token_gets_its_own_bar(tiny):
    s = Session(tiny, "The cat sat")
    probs = s.next_pipeline(SamplingConfig()).raw_probs
    unlikely = int(torch.argmin(probs))
    rec = s.force(unlikely, SamplingConfig(temperature=1.0))
    top = top_of_record(rec, 5)
    assert top.ids[:5] == rec.top_ids[:5].tolist() and top.ids[5] == unlikely and len(top.ids) == 6
    assert top.before[5] == pytest.approx(rec.prob)


def test_pipeline_candidates_are_the_raw_top_n(tiny):
    s = Session(tiny, "The cat sat")
    pipe = s.next_pipeline(SamplingConfig(temperature=0.7, top_k=3))
    top = top_of_pipeline(pipe, 8)
    assert top.ids == torch.topk(pipe.raw_probs, 8).indices.tolist()
    assert sum(p > 0 for p in top.after) == 3 and top.chosen is None


def test_token_strip_escapes_html(tiny):
    s = Session(tiny, "<script>alert(1)</script>")
    s.step(SamplingConfig(temperature=0))
    out = token_strip_html(s.views(), s.records, s.prompt_len)
    assert "<script>" not in out and "&lt;" in out
    assert out.count('class="tok prompt"') == s.prompt_len and out.count('class="tok gen') == 1


def test_history_and_logprob_chart(tiny):
    s = _session(tiny)
    frame = history_frame(tiny.tokenizer, s.records)
    assert list(frame.columns) == HISTORY_COLUMNS
    assert list(frame["step"]) == [1, 2, 3, 4]
    assert list(frame["id"]) == s.generated_ids
    assert list(frame["probability after filters"]) == [round(r.prob_filtered, 6) for r in s.records]
    fig = logprob_figure(s.records)
    assert fig.data[1].y[-1] == pytest.approx(s.sequence_logprob(), abs=1e-9)
    assert list(fig.data[0].y) == [r.logprob for r in s.records]


def test_topn_figure_from_plain_arrays(tiny):
    fig = topn_figure(tiny.tokenizer, TopN([5, 6], [0.5, 0.25], [0.75, 0.25], chosen=6))
    assert list(fig.data[0].y) == [0.5, 0.25, 0.25] and list(fig.data[1].y) == [0.75, 0.25, 0.0]


def test_token_strip_reads_to_a_screen_reader_and_marks_unlikely_picks_without_colour(tiny):
    s = Session(tiny, "The cat sat")
    s.step(SamplingConfig(temperature=0))
    s.force(5, SamplingConfig(temperature=0))
    out = token_strip_html(s.views(), s.records, s.prompt_len)
    assert out.count('role="listitem"') == len(s.views())
    for rec in s.records:
        assert f"probability {format.spoken_percent(rec.prob)}, rank {rec.rank}" in out
    assert out.count(", forced</span>") == sum(r.forced for r in s.records) == 1
    unlikely = sum(r.prob < palette.UNLIKELY for r in s.records)
    assert unlikely >= 1 and out.count("tok gen unlikely") == unlikely
    assert len(re.findall(r'class="tok gen[a-z ]* p\d+ forced"', out)) == 1
    assert "style=" not in out.split("</style>", 1)[1]  # colours are classes, no inline styles


def test_token_strip_shades_each_chip_by_its_probability(tiny):
    s = _session(tiny)
    out = token_strip_html(s.views(), s.records, s.prompt_len)
    for rec in s.records:
        shade = palette.prob_shade(rec.prob)
        assert f" p{shade}\"" in out or f" p{shade} " in out
        assert f".tokstrip .p{shade}{{background:{palette.prob_color(shade / palette.PROB_STEPS)}}}" in out
    assert [palette.prob_shade(p) for p in (0.0, 0.024, 0.026, 0.5, 1.0, 2.0)] == [0, 0, 1, 10, 20, 20]
    assert len(re.findall(r"\.tokstrip \.p\d+\{", out)) == palette.PROB_STEPS + 1


def test_a_chip_holding_part_of_a_character_does_not_say_the_next_token_completes_it():
    from autoreg_core.engine.tokens import TokenView

    # 🐈 is f0 9f 90 88: a 2-byte piece then two 1-byte pieces, so "half, the rest in the next token" is wrong
    views = [TokenView(1, "ðŁ", b"\xf0\x9f", ""), TokenView(2, "Ĳ", b"\x90", ""), TokenView(3, "Ī", b"\x88", "🐈")]
    html = token_strip_html(views, [], 3)
    assert html.count("part of a UTF-8 character: its other bytes are in the tokens next to it") == 2
    assert "the rest comes in the next token" not in html


@pytest.mark.parametrize("prob, said", [(0.9994, "99.9%"), (0.9995, "over 99.9%"), (1.0, "over 99.9%"),
                                        (0.00001, "0.001%"), (0.000009, "under 0.001%")])
def test_a_chip_never_reads_a_probability_as_certain_or_as_nothing(tiny, prob, said):
    """A screen reader hears the strip's probability as the page writes one (100.0% or 0.0% would be false), in
    words where the page has a symbol ('>' is read 'greater')."""
    from dataclasses import replace

    s = Session(tiny, "The cat sat")
    s.step(SamplingConfig(temperature=0))
    rec = replace(s.records[0], prob=prob)
    out = token_strip_html(s.views(), [rec], s.prompt_len)
    spoken = re.findall(r'<span class="sr">([^<]*)</span>', out)
    assert spoken == [f", probability {html.escape(said)}, rank {rec.rank}"]
