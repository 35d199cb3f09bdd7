"""The palette: hex colours, probabilities mapped in range, opacity clamped."""
import re

from autoreg_ui import palette


def test_colours_are_hex():
    named = [v for k, v in vars(palette).items() if k.isupper() and isinstance(v, str)]
    assert named and all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in named)


def test_probability_colours_and_alpha():
    assert palette.prob_color(0.0) != palette.prob_color(1.0)
    assert palette.prob_color(-1) == palette.prob_color(0.0) and palette.prob_color(2) == palette.prob_color(1.0)
    assert palette.alpha("#1f6feb", 0.5) == "rgba(31,111,235,0.500)"
    assert palette.alpha("#000000", 7) == "rgba(0,0,0,1.000)"
