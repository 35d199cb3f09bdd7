"""Figure builders of the step page: plain asserts on the figure data."""
from autoreg_core import SamplingConfig, Session
from autoreg_ui.figures.step import OTHER_LABEL, history_frame, logprob_figure, token_strip_html, topn_figure


def _session(tiny, prompt="The cat sat"):
    s = Session(tiny, prompt)
    s.generate(4, SamplingConfig(temperature=1.0, top_k=20, seed=3))
    return s


def test_topn_bars_sum_to_one_and_mark_the_chosen_token(tiny):
    s = _session(tiny)
    rec = s.records[-1]
    fig = topn_figure(tiny.tokenizer, rec.probs_before(), rec.probs_after(), rec.token_id, n=10)
    before, after = fig.data
    assert before.x[-1] == OTHER_LABEL
    assert abs(sum(before.y) - 1) < 1e-5 and abs(sum(after.y) - 1) < 1e-5
    assert rec.token_id in before.customdata
    idx = list(before.customdata).index(rec.token_id)
    assert after.marker.color[idx] != after.marker.color[0] or idx == 0
    assert len(set(before.x)) == len(before.x)  # labels unique


def test_token_strip_escapes_html(tiny):
    s = Session(tiny, "<script>alert(1)</script>")
    s.step(SamplingConfig(temperature=0))
    out = token_strip_html(s.views(), s.records, s.prompt_len)
    assert "<script>" not in out and "&lt;" in out
    assert out.count('class="tok prompt"') == s.prompt_len and out.count('class="tok gen"') == 1


def test_history_and_logprob_chart(tiny):
    s = _session(tiny)
    frame = history_frame(tiny.tokenizer, s.records)
    assert list(frame["step"]) == [1, 2, 3, 4]
    assert list(frame["id"]) == s.generated_ids
    fig = logprob_figure(s.records)
    assert abs(fig.data[1].y[-1] - s.sequence_logprob()) < 1e-9
