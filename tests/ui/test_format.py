"""One way to write numbers: binary byte units, counts, times and ratios."""
import math

from autoreg_ui import format as fmt


def test_bytes_are_binary_units():
    assert [fmt.human_bytes(n) for n in (0, 1023, 1024, 1536, 1024 ** 2 * 3, 1024 ** 3 * 1.25, 1024 ** 5)] == [
        "0 B", "1,023 B", "1.00 KiB", "1.50 KiB", "3.00 MiB", "1.25 GiB", "1,024.00 TiB"]
    assert "1 KiB = 1,024 bytes" in fmt.BYTE_UNITS_NOTE


def test_counts_times_and_ratios():
    assert [fmt.human_count(n) for n in (999, 1234, 1_234_567, 2e9, 3.5e12)] == ["999", "1.23 k", "1.23 M", "2.00 G",
                                                                                   "3.50 T"]
    assert [fmt.ms(v) for v in (35.4, 2410.0, None, math.nan)] == ["35 ms", "2.41 s", "—", "—"]
    assert [fmt.ratio(v) for v in (29.44, None, math.inf)] == ["29.4×", "—", "—"]


def test_a_probability_reads_as_a_percentage_on_each_side_of_each_boundary():
    assert [fmt.percent(p) for p in (0.4153, 0.001, 0.000999, 0.0000123, 1e-5)] == [
        "41.5%", "0.1%", "0.1%", "0.0012%", "0.001%"]  # 0.1%, then two significant digits down to 0.001%
    assert [fmt.percent(p) for p in (9.99e-6, 2.5e-9, 1e-300)] == ["< 0.001%"] * 3  # under it: no e-notation
    assert fmt.percent(0.0) == "0%" and fmt.percent(0.00042) == "0.042%"
    assert all("e" not in fmt.percent(10.0 ** -k) for k in range(0, 40))
    assert [fmt.p_is(p) for p in (0.05, 1e-5, 9.99e-6)] == ["p = 5.0%", "p = 0.001%", "p < 0.001%"]


def test_a_probability_just_under_one_is_said_as_over_99_9_percent_not_100():
    assert [fmt.percent(p) for p in (0.999, 0.99949, 0.9995, 0.9999, 1 - 1e-12, 1.0)] == [
        "99.9%", "99.9%", "> 99.9%", "> 99.9%", "> 99.9%", "> 99.9%"]  # each side of 0.9995; 1.0 is float32's
    assert [fmt.p_is(p) for p in (0.99949, 0.9995, 1.0)] == ["p = 99.9%", "p > 99.9%", "p > 99.9%"]


def test_a_spoken_percentage_says_over_and_under_in_words():
    """Screen readers read '>' as 'greater': the spoken form names the bound in words, on both sides of each."""
    assert [fmt.spoken_percent(p) for p in (0.99949, 0.9995, 1.0, 1e-5, 9.99e-6, 0.415)] == [
        "99.9%", "over 99.9%", "over 99.9%", "0.001%", "under 0.001%", "41.5%"]


def test_apart_adds_digits_only_until_a_value_and_its_bound_differ():
    assert fmt.apart(50.004, 50) == ("50.004", "50") and fmt.apart(49.996, 50) == ("49.996", "50")
    assert fmt.apart(41.5, 50) == ("42", "50") and fmt.apart(50.0, 50) == ("50", "50")
