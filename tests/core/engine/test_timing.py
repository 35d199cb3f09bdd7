"""The one timing helper: the fastest of several runs, how many runs, tuples minimised by column."""
import itertools

import torch

from autoreg_core.engine import timing


def test_fastest_keeps_the_minimum_and_counts_the_runs():
    values = iter([5.0, 3.0, 4.0])
    assert timing.fastest_ms(lambda: next(values), 3) == (3.0, 3)


def test_more_runs_until_the_time_floor_but_never_past_the_cap():
    calls = itertools.count()
    fastest, n = timing.fastest_ms(lambda: 10.0 + next(calls), 1, 5, min_seconds=0.025)  # 10 + 11 + 12 ms ≥ 25
    assert (fastest, n) == (10.0, 3)
    fastest, n = timing.fastest_ms(lambda: 1.0, 2, 4, min_seconds=10.0)
    assert (fastest, n) == (1.0, 4)


def test_tuples_are_minimised_column_by_column():
    values = iter([(5.0, 1.0), (2.0, 9.0)])
    assert timing.fastest_ms(lambda: next(values), 2) == ((2.0, 1.0), 2)


def test_timed_ms_returns_the_result_and_a_positive_time():
    out, ms = timing.timed_ms(lambda: sum(range(10000)), torch.device("cpu"))
    assert out == 49995000 and ms > 0
