"""Why generation ends: EOS, the max-new-tokens budget, a stop sequence — and which wins."""
import pytest

from autoreg_core.engine.stopping import EOS, MAX_NEW_TOKENS, STOP_SEQUENCE, matched_stop_sequence, stop_reason

PROMPT = [10, 11, 12]
EOS_IDS = [2, 7]


def reason(generated: list[int], text: str = "", max_new: int = 10, stops: tuple[str, ...] = ()):
    return stop_reason(PROMPT + generated, len(PROMPT), text, max_new, EOS_IDS, stops)


def test_nothing_stops_an_ordinary_sequence():
    assert reason([20, 21], "hello") is None
    assert reason([]) is None


@pytest.mark.parametrize("eos", EOS_IDS)
def test_any_eos_id_stops_but_only_in_the_generated_part(eos):
    kind, message = reason([20, eos])
    assert kind == EOS and "end-of-sequence" in message
    assert stop_reason([eos, 10, 11], 3, "", 10, EOS_IDS, ()) is None  # EOS inside the prompt


def test_max_new_tokens_counts_only_generated_tokens():
    assert reason([1] * 3, max_new=4) is None
    kind, message = reason([1] * 4, max_new=4)
    assert kind == MAX_NEW_TOKENS and "(4)" in message


def test_stop_sequence_names_the_one_that_matched_first():
    kind, message = reason([5, 6], "one. two\n\nthree END", stops=("END", "\n\n"))
    assert kind == STOP_SEQUENCE and repr("\n\n") in message
    assert matched_stop_sequence("abc", ("x", "")) is None
    assert matched_stop_sequence("say END now", ("END",)) == "END"


def test_eos_wins_over_a_full_budget_and_a_stop_sequence():
    assert reason([5, 2], "END", max_new=2, stops=("END",))[0] == EOS
    assert reason([5, 6], "END", max_new=2, stops=("END",))[0] == STOP_SEQUENCE
