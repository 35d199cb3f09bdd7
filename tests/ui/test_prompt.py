"""The prompt box: its values survive a page change (Streamlit forgets widgets a page did not draw)."""
from autoreg_ui import keys, prompt
from autoreg_ui.state import DEFAULT_PROMPT


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
