"""The token strip's key: counts said with their own number, singular and plural."""
from autoreg_ui import strip_text


def test_the_legend_counts_tokens_on_both_sides_of_one():
    one = strip_text.strip_legend(1, 1, 0.1)
    assert one.startswith("1 prompt token (grey, dashed border) · 1 generated, shaded")
    many = strip_text.strip_legend(5, 0, 0.1)
    assert many.startswith("5 prompt tokens (grey, dashed border) · 0 generated, shaded")
    assert "a pick under 10%" in many and "a pick under 5%" in strip_text.strip_legend(2, 3, 0.05)
    assert strip_text.strip_legend(1_234, 2, 0.1).startswith("1,234 prompt tokens")


def test_the_marks_say_what_each_symbol_stands_for():
    assert strip_text.STRIP_MARKS == "In the tokens, · is a space, ↵ a new line, → a tab and ∅ an empty piece."
