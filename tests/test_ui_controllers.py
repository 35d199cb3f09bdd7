"""The small UI controllers without Streamlit running: messages, the prompt box, the step controls."""
import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui import controls, keys, messages, prompt
from autoreg_ui.state import DEFAULT_PROMPT


def test_messages_queue_in_order_without_duplicates_and_empty_on_take():
    state = {}
    messages.say("first", state=state)
    messages.say("second", "error", state=state)
    messages.say("first", state=state)
    assert messages.take(state) == [("warning", "first"), ("error", "second")]
    assert messages.take(state) == []
    with pytest.raises(ValueError):
        messages.say("x", "shout", state=state)


def test_prompt_box_values_survive_a_page_change():
    state = {}
    prompt.restore(state)
    assert (state[keys.PROMPT_BOX], state[keys.CHAT_BOX]) == (DEFAULT_PROMPT, False)
    state[keys.PROMPT_BOX] = "My own words"
    prompt.keep_prompt(state)
    state[keys.CHAT_BOX] = True
    prompt.keep_chat(state)
    del state[keys.PROMPT_BOX], state[keys.CHAT_BOX]  # Streamlit forgets widgets a page did not draw
    prompt.restore(state)
    assert (state[keys.PROMPT_BOX], state[keys.CHAT_BOX]) == ("My own words", True)
    state[keys.EXAMPLE_BOX] = "The capital of France is"
    prompt.pick_example(state)
    assert state[keys.PROMPT_BOX] == state[keys.PROMPT_KEPT] == "The capital of France is"


def test_a_refused_step_becomes_a_message_and_changes_nothing(tiny, monkeypatch):
    said = []
    session = Session(tiny, "The cat")
    monkeypatch.setattr(controls, "session_or_start", lambda: session)
    monkeypatch.setattr(controls, "current_session", lambda: session)
    monkeypatch.setattr(controls, "current_config", lambda: SamplingConfig(temperature=0, max_new_tokens=2))
    monkeypatch.setattr(controls.messages, "say", lambda text, level="warning": said.append((level, text)))
    controls.next_token()
    controls.next_token()
    controls.next_token()  # the budget of 2 is spent
    assert len(session.records) == 2 and said[-1][0] == "warning" and "max new tokens (2)" in said[-1][1]
    controls.force(" two tokens here")
    assert len(session.records) == 2 and "not a single token" in said[-1][1]
    controls.undo()
    controls.undo()
    controls.undo()
    assert session.records == [] and said[-1] == ("info", "Nothing to undo: no token has been generated yet.")


def test_messages_show_user_text_as_plain_text():
    text = "' **bold** [x](http://a) :smile: <b>x</b> $1' is not a single token"
    shown = messages.plain(text)
    assert "**" not in shown and "](" not in shown and "<b>" not in shown and "\\:smile:" in shown
    assert messages.plain("a plain sentence: nothing to escape") == "a plain sentence: nothing to escape"
    assert shown.replace("\\", "") == text
