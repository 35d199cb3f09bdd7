"""The step controls without Streamlit running: a refused step becomes a message and changes nothing."""
from autoreg_core import SamplingConfig, Session
from autoreg_ui import controls


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
