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
