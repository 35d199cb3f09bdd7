"""What the serving page says around its measurements."""
from autoreg_ui.lessons.serving import controller as serving
from autoreg_ui.lessons.serving import text


def test_captions_carry_their_numbers():
    assert text.measuring_now("precision table") == ("Measuring now on this server: precision table. A click of "
                                                     "yours waits in line behind it.")
    assert text.rounds_title("open-ended", "prompt lookup") == "Every round: “open-ended” with prompt lookup"
    said = text.precision_caption(40, 120)
    assert "filled the cache to 40 positions." in said and "KL and top-1 over 120 positions of a fixed text." in said
    assert text.dial_label(serving.DIAL_BITS) == f"Round the weights to {serving.DIAL_BITS[0]}…2 bits"
    assert text.MEASURED_LIVE.startswith(" ")  # it follows the byte-units note in one caption


def test_the_live_panel_says_what_it_counts():
    from autoreg_core.batcher import ServerNow, Totals

    now = ServerNow(passes=3, tokens=9, window_s=60.0, by_rows={1: 1, 4: 2}, since_start=Totals(1200, 3456, 2001))
    assert text.live_totals(now) == ("Since this server started: 1,200 passes served 3,456 tokens, 2,001 of them in "
                                     "a pass shared with another tab's step.")
    one = ServerNow(1, 1, 60.0, {1: 1}, Totals(1, 1, 0))
    assert text.live_totals(one).startswith("Since this server started: 1 pass served 1 token, 0 of them")
    assert text.live_sentence(now) == "3 passes served 9 tokens; the largest pass carried 4 tabs' steps at once."
    assert dict(text.live_metrics(now, 3))["Your last step rode with"] == "2 other tabs"
    assert dict(text.live_metrics(now, None))["Your last step rode with"] == "—"
    assert text.live_auto_label(serving.LIVE_EVERY_S) == f"Update every {serving.LIVE_EVERY_S:g} s"


def test_the_live_panel_redraws_on_a_timer_of_a_few_seconds_or_not_at_all():
    assert 1 <= serving.live_every(True) <= 10 and serving.live_every(False) is None
