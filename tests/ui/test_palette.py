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


def test_probability_ramp_is_ordered_by_lightness_and_dark_text_reads_on_it():
    shades = [palette.prob_color(p / 20) for p in range(21)]
    assert shades[0] == palette.PROB_RAMP[0] and shades[-1] == palette.PROB_RAMP[-1]
    lum = [palette.luminance(c) for c in shades]
    assert all(a > b for a, b in zip(lum, lum[1:]))  # lightness alone tells the order: no hue needed
    assert min(palette.contrast(palette.TEXT, c) for c in shades) >= 7  # AAA for the chip text
    assert round(palette.contrast("#ffffff", "#000000"), 1) == 21.0
