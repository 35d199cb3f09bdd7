"""The message channel: queued in order, shown once, and every text escaped by the app's one Markdown escaper."""
import pytest

from autoreg_ui import messages


def test_messages_queue_in_order_without_duplicates_and_empty_on_take():
    state = {}
    messages.say("first", state=state)
    messages.say("second", "error", state=state)
    messages.say("first", state=state)
    assert messages.take(state) == [("warning", "first"), ("error", "second")]
    assert messages.take(state) == []
    with pytest.raises(ValueError):
        messages.say("x", "shout", state=state)




def test_messages_show_user_text_as_plain_text():
    text = "' **bold** [x](http://a) :smile: <b>x</b> $1' is not a single token"
    shown = messages.plain(text)
    assert "**" not in shown and "](" not in shown and "<b>" not in shown and "\\:smile:" in shown
    assert messages.plain("a plain sentence: nothing to escape") == "a plain sentence: nothing to escape"
    assert shown.replace("\\", "") == text


@pytest.mark.parametrize("hostile", [
    "<script>alert(1)</script>", "[click](javascript:alert(1))", ":red[loud] :rainbow[x]", "$\\frac{1}{2}$",
    "# heading", "- list item", "1. numbered", "| a | b |", "~~gone~~", "`code`", "![img](x.png)", "**bold** _it_",
])
def test_hostile_text_is_shown_exactly_as_written(hostile):
    import re

    shown = messages.plain(hostile)
    unescaped = re.sub(r"\\.", "", shown)  # what is left once every backslash pair is taken out
    assert not set(unescaped) & set("`*_{}[]()#|~<>$")
    assert not re.match(r"\s*([-+] |\d+\. )", unescaped)  # no list marker left at the start of a line
    assert re.sub(r"\\(.)", r"\1", shown) == hostile


def test_dots_and_dashes_inside_a_sentence_are_left_alone():
    assert messages.plain("It was ignored. 3 - 2 = 1.") == "It was ignored. 3 - 2 = 1."
    assert messages.plain("1. first\n- second") == "1\\. first\n\\- second"

