"""What the serving page says around its measurements."""
from autoreg_ui import serving, serving_text as text


def test_captions_carry_their_numbers():
    assert text.measuring_now("precision table") == ("Measuring now on this server: precision table. A click of "
                                                     "yours waits in line behind it.")
    assert text.rounds_title("open-ended", "prompt lookup") == "Every round: “open-ended” with prompt lookup"
    said = text.precision_caption(40, 120)
    assert "filled the cache to 40 positions." in said and "KL and top-1 over 120 positions of a fixed text." in said
    assert text.dial_label(serving.DIAL_BITS) == f"Round the weights to {serving.DIAL_BITS[0]}…2 bits"
    assert text.MEASURED_LIVE.startswith(" ")  # it follows the byte-units note in one caption
