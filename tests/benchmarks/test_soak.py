"""bench/soak.py: the memory slope is read after the warm-up only, in MiB per minute, against ±2 MiB/min."""
import pytest

from bench import soak
from bench.lib.goals import slope_within_goal
from bench.lib.stats import slope_after_warmup, slope_error


def test_the_slope_reads_only_samples_after_the_warmup_in_mib_per_minute():
    warming = [(0.0, 100.0), (30.0, 400.0), (60.0, 700.0)]  # fast growth while the class arrives
    flat_then_rising = [(120.0, 800.0), (180.0, 801.0), (240.0, 802.0), (300.0, 803.0)]  # 1 MiB a minute
    samples = warming + flat_then_rising
    assert slope_after_warmup(samples, 120.0) == pytest.approx(1.0)
    assert slope_after_warmup(samples, 0.0) > 100  # the warm-up's growth counted: a different figure
    # a sample exactly at the warm-up's end counts; one just before does not
    assert slope_after_warmup(samples, 180.0) == pytest.approx(1.0)
    assert slope_after_warmup([(59.9, 0.0)] + flat_then_rising, 60.0) == pytest.approx(1.0)


def test_a_shrinking_server_has_a_negative_slope_and_too_few_samples_have_none():
    falling = [(0.0, 900.0), (60.0, 897.0), (120.0, 894.0)]
    assert slope_after_warmup(falling, 0.0) == pytest.approx(-3.0)
    assert slope_after_warmup(falling[:2], 0.0) is None  # two samples: no trend read
    assert slope_after_warmup(falling, 61.0) is None  # one sample after the warm-up
    assert slope_after_warmup([(5.0, 1.0)] * 3, 0.0) is None  # one instant: no slope


def test_the_verdict_holds_on_both_sides_of_two_mib_per_minute():
    assert slope_within_goal(2.0) and slope_within_goal(-2.0) and slope_within_goal(0.0)
    assert slope_within_goal(2.01) is False and slope_within_goal(-2.01) is False
    assert slope_within_goal(None) is None


def test_a_soak_student_resets_at_its_token_count_and_before_the_text_is_full():
    import random

    student = soak.SoakStudent(0, 1000, "http://127.0.0.1:1", random.Random(0))
    assert [student.next_kind(n, 64) for n in (0, 39, 40, 41)] == [soak.NEXT, soak.NEXT, soak.RESET, soak.RESET]
    student.reset_every = 10
    assert [student.next_kind(n, 64) for n in (9, 10)] == [soak.NEXT, soak.RESET]
    assert student.next_kind(5, 6) == soak.RESET  # max new tokens 6: reset at 5, as the class bench does


def test_the_slopes_standard_error_is_zero_on_a_line_and_numpys_on_a_saw_tooth():
    import numpy as np

    line = [(t * 60.0, 500.0 + 3 * t) for t in range(6)]
    assert slope_error(line, 0.0) == pytest.approx(0.0, abs=1e-9)
    saw = [(t * 60.0, 500.0 + 3 * t + (40 if t % 2 else -40)) for t in range(6)]
    fit, cov = np.polyfit([t for t, _ in saw], [m for _, m in saw], 1, cov=True)  # an independent fit
    assert slope_after_warmup(saw, 0.0) == pytest.approx(fit[0] * 60)
    assert slope_error(saw, 0.0) == pytest.approx(float(np.sqrt(cov[0, 0])) * 60)
    assert slope_error(saw, 0.0) > 5  # the saw-tooth makes a 3 MiB/min slope uncertain
    assert slope_error(saw[:2], 0.0) is None


def test_staggered_students_reset_first_at_their_own_count_then_every_reset_every_tokens():
    import random

    assert [soak.stagger(i, 4, 40) for i in range(4)] == [10, 20, 30, 40]
    assert [soak.stagger(i, 30, 40) for i in (0, 1, 14, 29)] == [1, 3, 20, 40]  # spread over 1..40
    assert soak.stagger(0, 200, 40) == 1  # never a first cycle of no token
    student = soak.SoakStudent(1, 1001, "http://127.0.0.1:1", random.Random(0))
    student.first_reset = 20
    assert [student.next_kind(n, 64) for n in (0, 19)] == [soak.NEXT, soak.NEXT]
    assert student.next_kind(20, 64) == soak.RESET and student.first_reset is None
    assert [student.next_kind(n, 64) for n in (0, 20, 39, 40)] == [soak.NEXT, soak.NEXT, soak.NEXT, soak.RESET]
