"""The step page's token views memo (``ViewsMemo``): kept views are reused only where they are exact."""
import dataclasses
import random

import pytest
from transformers.convert_slow_tokenizer import bytes_to_unicode

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.tokens import token_views
from autoreg_ui.step_figures import ViewsMemo, session_views
from tests.tiny import sentencepiece_tokenizer


def _byte_id(tok, byte: int) -> int:
    """The byte-level BPE token that stands for one raw byte (UTF-8 pieces are built from these)."""
    return tok.convert_tokens_to_ids(bytes_to_unicode()[byte])


def test_a_character_split_over_tokens_is_decoded_as_the_whole_sequence_would_be(tiny):
    tok, memo = tiny.tokenizer, ViewsMemo()
    text = tok("The cat")["input_ids"]
    e_acute = [_byte_id(tok, 0xC3), _byte_id(tok, 0xA9)]  # 'é' in UTF-8, one byte per token
    for ids in (text, text + e_acute[:1], text + e_acute, text + e_acute[:1], text + e_acute + text):
        assert memo.views(tok, ids) == token_views(tok, ids)
    half = memo.views(tok, text + e_acute[:1])
    assert half[-1].partial and half == token_views(tok, text + e_acute[:1])
    whole = memo.views(tok, text + e_acute)
    assert not whole[-1].partial and whole[-1].text == "é" and whole == token_views(tok, text + e_acute)


def test_random_growth_undo_and_changes_always_equal_the_whole_decode(tiny):
    tok, memo, rng = tiny.tokenizer, ViewsMemo(), random.Random(7)
    pool = tok("The cat sat on the mat")["input_ids"] + [_byte_id(tok, b) for b in (0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0)]
    pool += sorted(tok.all_special_ids)
    ids: list[int] = []
    for _ in range(300):
        move = rng.random()
        if move < 0.6 or not ids:
            ids = ids + [rng.choice(pool)]
        elif move < 0.8:
            ids = ids[:-rng.randint(1, min(3, len(ids)))]
        else:
            at = rng.randrange(len(ids))
            ids = ids[:at] + [rng.choice(pool)] + ids[at + 1:]
        assert memo.views(tok, ids) == token_views(tok, ids), ids


def test_another_tokenizer_is_decoded_afresh(tiny):
    memo, other = ViewsMemo(), sentencepiece_tokenizer()
    ids = tiny.tokenizer("The cat")["input_ids"]
    assert memo.views(tiny.tokenizer, ids) == token_views(tiny.tokenizer, ids)
    theirs = [i for i in ids if i < other.vocab_size]
    assert memo.views(other, theirs) == token_views(other, theirs)


def test_a_returned_list_changed_by_the_caller_does_not_change_the_memo(tiny):
    tok, memo = tiny.tokenizer, ViewsMemo()
    ids = tok("The cat sat")["input_ids"]
    memo.views(tok, ids).clear()
    assert memo.views(tok, ids) == token_views(tok, ids)


def test_session_views_follow_steps_undo_force_and_reset(tiny):
    s = Session(tiny, "The cat sat")
    config = SamplingConfig(temperature=1.0, seed=5)
    assert session_views(s) == s.views()
    s.generate(5, config)
    assert session_views(s) == s.views() and len(session_views(s)) == len(s.ids)
    s.undo()
    s.undo()
    assert session_views(s) == s.views() and len(session_views(s)) == len(s.ids)
    s.force(_byte_id(tiny.tokenizer, 0xC3), config)
    assert session_views(s) == s.views() and session_views(s)[-1].partial
    s.force(_byte_id(tiny.tokenizer, 0xA9), config)
    assert session_views(s) == s.views() and session_views(s)[-1].text == "é"
    s.reset()
    assert session_views(s) == s.views() and len(session_views(s)) == s.prompt_len
    other = Session(tiny, "A dog ran")  # each session has its own memo
    assert session_views(other) == other.views() and session_views(s) == s.views()


def test_the_strip_built_from_kept_chips_equals_the_strip_built_afresh(tiny):
    from autoreg_ui.step_figures import strip_memo, token_strip_html

    s = Session(tiny, "The cat sat")
    config = SamplingConfig(temperature=1.0, seed=11)

    def same() -> str:
        kept = token_strip_html(session_views(s), s.records, s.prompt_len, memo=strip_memo(s))
        fresh = token_strip_html(s.views(), s.records, s.prompt_len)
        assert kept == fresh and len(strip_memo(s)) == len(s.ids)
        return kept

    first = same()
    s.generate(4, config)
    grown = same()
    assert grown != first and grown.count('role="listitem"') == len(s.ids)
    s.undo()
    same()
    s.force(_byte_id(tiny.tokenizer, 0xC3), config)  # a new record at a position that had one: its chip is rebuilt
    assert 'class="tok gen' in same() and "forced" in same()
    s.undo()
    s.step(config)
    same()
    s.reset()
    assert same().count('role="listitem"') == s.prompt_len


def test_kept_chips_follow_a_changed_prompt_length_and_records(tiny):
    from autoreg_ui.step_figures import token_strip_html

    s = Session(tiny, "The cat sat")
    s.generate(3, SamplingConfig(temperature=1.0, seed=2))
    views, memo = s.views(), []
    for prompt_len, records in ((s.prompt_len, s.records), (s.prompt_len + 1, s.records[1:]),
                                (s.prompt_len, s.records), (s.prompt_len, s.records[:2]), (len(views), [])):
        assert (token_strip_html(views, records, prompt_len, memo=memo)
                == token_strip_html(views, records, prompt_len)), prompt_len


@pytest.mark.parametrize("change", [dict(prob=0.01), dict(prob_filtered=0.5), dict(rank=7), dict(logprob=-9.0),
                                    dict(forced=True)])
def test_a_chip_is_rebuilt_when_anything_it_shows_changes(tiny, change):
    from autoreg_ui.step_figures import token_strip_html

    s = Session(tiny, "The cat sat")
    s.generate(3, SamplingConfig(temperature=1.0, seed=4))
    views, memo = s.views(), []
    token_strip_html(views, s.records, s.prompt_len, memo=memo)
    for at in (0, len(s.records) - 1):  # the first generated token and the last
        records = list(s.records)
        records[at] = dataclasses.replace(records[at], **change)
        kept = token_strip_html(views, records, s.prompt_len, memo=memo)
        assert kept == token_strip_html(views, records, s.prompt_len) != token_strip_html(views, s.records,
                                                                                           s.prompt_len)
        assert token_strip_html(views, s.records, s.prompt_len, memo=memo) == token_strip_html(views, s.records,
                                                                                                s.prompt_len)
