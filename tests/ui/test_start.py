"""The Start page's quiz numbers come from the engine, and each right choice agrees with them."""
import pytest

from autoreg_ui.format import human_bytes
from autoreg_ui.lessons.start import numbers as start
from autoreg_ui.lessons.start import text


@pytest.fixture(scope="module")
def numbers():
    return start.quiz_numbers()


def test_the_seeds_worked_examples(numbers):
    assert (numbers["naive_50_100"], numbers["cached_50_100"]) == (9950, 149)
    assert (numbers["naive_1000"], numbers["cached_1000"]) == (500_500, 1000)
    assert numbers["accept_p03_q06"] == pytest.approx(0.5)
    assert numbers["gqa_70b_bytes"] == 2 * 80 * 8 * 128 * 4096 * 2
    assert numbers["mha_70b_bytes"] == numbers["gqa_70b_bytes"] * 8


def test_each_right_choice_matches_the_computed_answer(numbers):
    naive, gqa, accept = text.QUIZ
    assert abs(numbers["naive_50_100"] - 10_000) / 10_000 < 0.02 and "10,000" in naive.choices[naive.right]
    assert f"about {human_bytes(numbers['gqa_70b_bytes'])}" == gqa.choices[gqa.right] == "about 1.25 GiB"
    assert float(accept.choices[accept.right]) == numbers["accept_p03_q06"]
    assert all(q.choices[q.right] == "false" for q in text.MYTHS)


def test_every_answer_fills_in_without_a_missing_number(numbers):
    for q in text.QUIZ + text.MYTHS:
        answer = text.answer_text(q, numbers)
        assert "{" not in answer and "}" not in answer
    assert "**1.25 GiB**" in text.answer_text(text.QUIZ[1], numbers)
    assert "× 128 dims ×" in text.answer_text(text.QUIZ[1], numbers)
