"""The attention page's controller: layer/head defaults, the backfill button, one consistent read."""
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core import attention_view as av
from autoreg_ui import attention_controls as ac
from autoreg_ui import keys, messages

GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=50)


@pytest.mark.parametrize("layer,head,expected", [
    (None, None, (15, 0)), (500, 42, (15, 0)), (-2, -2, (15, 0)), ("3", "1", (15, 0)), (True, 1.0, (15, 0)),
    (0, -1, (0, -1)), (29, 8, (29, 8)), (3, 9, (3, 0))])
def test_settle_layer_head(layer, head, expected):
    state = {k: v for k, v in ((keys.ATT_LAYER, layer), (keys.ATT_HEAD, head)) if v is not None}
    ac.settle_layer_head(state, 30, 9)
    assert (state[keys.ATT_LAYER], state[keys.ATT_HEAD]) == expected


def test_head_options_and_labels():
    gqa = av.gqa_info(9, 3)
    assert ac.head_options(9) == [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert [ac.head_label(h, gqa) for h in (-1, 0, 4)] == [
        "mean of all 9 heads", "head 0 (reads K/V head 0)", "head 4 (reads K/V head 1)"]
    assert [ac.head_index(h) for h in (-1, 0, 4)] == [None, 0, 4]
    assert [ac.head_name(h, 9) for h in (None, 3)] == ["mean of 9 heads", "head 3"]
    assert ac.inline_code("a`b") == "`aˋb`"
    assert [ac.first_shown(n) for n in (0, ac.MAX_TRIANGLE, ac.MAX_TRIANGLE + 7)] == [0, 0, 7]


def test_backfill_button_fills_and_says_so(tiny):
    s = Session(tiny, "The cat sat on the mat.")
    s.generate(3, GREEDY)
    state = {}
    assert ac.backfill(s, state) == s.prompt_len + 3
    assert messages.take(state) == [("success", f"Recomputed {s.prompt_len + 3} missing rows with one full "
                                                "forward pass.")]
    assert av.row_sources(s) == [av.PREFILL] * s.prompt_len + [av.DECODE] * 3


def test_backfill_button_refusal_is_a_message(tiny, monkeypatch):
    s = Session(tiny, "The cat sat on the mat.")
    s.prefill()
    monkeypatch.setattr(av, "MAX_FULL_TOKENS", 2)
    state = {}
    assert ac.backfill(s, state) == 0
    assert messages.take(state) == [("warning", f"The sequence has {s.prompt_len} tokens; recomputing every row "
                                                "is limited to 2 to keep memory per tab bounded.")]


def test_read_is_one_consistent_picture(tiny):
    s = Session(tiny, "The cat sat on the mat.", capture_attention=True)
    s.generate(4, GREEDY)
    pic = ac.read(s, 1, None)
    N = s.prompt_len + 4
    assert (pic.n_rows, pic.n_steps, pic.positions) == (N, 4, N)
    assert len(pic.labels) == N and pic.labels == [v.label for v in s.views()]
    assert pic.z.shape == (N, N) and pic.sources == [av.PREFILL] * s.prompt_len + [av.DECODE] * 4
    assert pic.latest[0] == N - 1 and pic.latest[1].shape == (tiny.spec.n_layers, tiny.spec.n_heads, N)
    assert pic.measured == tiny.spec.cache_bytes(N) and len(pic.shapes) == tiny.spec.n_layers
    assert [p.positions for p in pic.timeline] == [s.prompt_len + i for i in range(5)]
    assert pic.times.decode_steps == 4
