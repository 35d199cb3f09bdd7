"""Reading the URL: ?layer=&head= for the attention page, ?model= for the sidebar (plain dicts as state)."""
import pytest

from autoreg_ui import keys, links, messages

N_LAYERS, N_HEADS = 30, 9


@pytest.mark.parametrize("raw,expected", [
    ("3", 3), ("0", 0), ("29", 29), (" 7 ", 7), ("+4", 4), ("007", 7), (5, 5),
    (None, None), ("", None), ("   ", None)])
def test_good_or_empty_layer(raw, expected):
    assert links.parse_index(raw, N_LAYERS, "layer") == (expected, None)


@pytest.mark.parametrize("raw,message", [
    ("30", "The layer 30 in the link does not exist: this model has layers 0–29; it was ignored."),
    ("-1", "The layer -1 in the link does not exist: this model has layers 0–29; it was ignored."),
    ("x", "The layer 'x' in the link is not a whole number; it was ignored."),
    ("3.0", "The layer '3.0' in the link is not a whole number; it was ignored."),
    ("1e3", "The layer '1e3' in the link is not a whole number; it was ignored."),
    ("mean", "The layer 'mean' in the link is not a whole number; it was ignored."),
    ("99999999999", "The layer '99999999999' in the link is not a whole number; it was ignored."),
    ("<b>[x](y)</b>", "The layer '?b??x??y??/b?' in the link is not a whole number; it was ignored."),
    ("a" * 40, f"The layer '{'a' * 16}…' in the link is not a whole number; it was ignored."),
])
def test_bad_layer_gets_a_clear_message(raw, message):
    assert links.parse_index(raw, N_LAYERS, "layer") == (None, message)


@pytest.mark.parametrize("raw,expected", [("mean", -1), ("MEAN", -1), ("avg", -1), (" average ", -1),
                                          ("0", 0), ("8", 8)])
def test_good_head(raw, expected):
    assert links.parse_index(raw, N_HEADS, "head", allow_mean=True) == (expected, None)
    assert links.MEAN == -1


@pytest.mark.parametrize("raw,message", [
    ("9", "The head 9 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."),
    ("-1", "The head -1 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."),
    ("all", "The head 'all' in the link is not a whole number or 'mean'; it was ignored."),
])
def test_bad_head_gets_a_clear_message(raw, message):
    assert links.parse_index(raw, N_HEADS, "head", allow_mean=True) == (None, message)


def test_link_sets_layer_and_head_once_per_distinct_link():
    state = {}
    assert links.apply_layer_head({"layer": "3", "head": "mean"}, state, N_LAYERS, N_HEADS) == []
    assert (state[keys.ATT_LAYER], state[keys.ATT_HEAD]) == (3, -1)
    assert messages.take(state) == []
    state[keys.ATT_LAYER] = 7  # the learner moves the slider; the URL still carries layer=3
    links.apply_layer_head({"layer": "3", "head": "mean"}, state, N_LAYERS, N_HEADS)
    assert state[keys.ATT_LAYER] == 7
    links.apply_layer_head({"layer": "4", "head": "mean"}, state, N_LAYERS, N_HEADS)  # a new link applies
    assert state[keys.ATT_LAYER] == 4


def test_only_layer_or_only_head():
    state = {keys.ATT_LAYER: 5, keys.ATT_HEAD: 2}
    links.apply_layer_head({"head": "4"}, state, N_LAYERS, N_HEADS)
    assert (state[keys.ATT_LAYER], state[keys.ATT_HEAD]) == (5, 4)
    links.apply_layer_head({"layer": "1"}, state, N_LAYERS, N_HEADS)
    assert (state[keys.ATT_LAYER], state[keys.ATT_HEAD]) == (1, 4)


def test_no_link_changes_nothing():
    state = {keys.ATT_LAYER: 5}
    assert links.apply_layer_head({}, state, N_LAYERS, N_HEADS) == []
    assert state == {keys.ATT_LAYER: 5}


def test_bad_link_keeps_widgets_and_says_why_once():
    state = {keys.ATT_LAYER: 5, keys.ATT_HEAD: 2}
    notes = links.apply_layer_head({"layer": "99", "head": "-1"}, state, N_LAYERS, N_HEADS)
    assert notes == ["The layer 99 in the link does not exist: this model has layers 0–29; it was ignored.",
                     "The head -1 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."]
    assert (state[keys.ATT_LAYER], state[keys.ATT_HEAD]) == (5, 2)
    assert messages.take(state) == [("warning", notes[0]), ("warning", notes[1])]
    assert links.apply_layer_head({"layer": "99", "head": "-1"}, state, N_LAYERS, N_HEADS) == []  # said once
    assert messages.take(state) == []


def test_half_bad_link_applies_the_good_half():
    state = {}
    notes = links.apply_layer_head({"layer": "2", "head": "nine"}, state, N_LAYERS, N_HEADS)
    assert state[keys.ATT_LAYER] == 2 and keys.ATT_HEAD not in state
    assert notes == ["The head 'nine' in the link is not a whole number or 'mean'; it was ignored."]


ALLOWED = ["HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"]


def test_model_link_selects_an_allowed_model_once():
    state = {}
    assert links.apply_model({"model": ALLOWED[1]}, state, ALLOWED, ALLOWED[0]) is None
    assert state[keys.MODEL] == ALLOWED[1] and keys.MODEL_LINK_ERROR not in state
    state[keys.MODEL] = ALLOWED[0]  # the learner picks another model in the sidebar
    links.apply_model({"model": ALLOWED[1]}, state, ALLOWED, ALLOWED[0])
    assert state[keys.MODEL] == ALLOWED[0]


def test_unknown_model_link_keeps_the_default_and_says_so():
    state = {}
    note = links.apply_model({"model": "evil/<script>"}, state, ALLOWED, ALLOWED[0])
    assert note == ("Unknown model 'evil/?script?' in the link; using HuggingFaceTB/SmolLM2-135M-Instruct. "
                    "Available: HuggingFaceTB/SmolLM2-135M-Instruct, Qwen/Qwen2.5-0.5B-Instruct.")
    assert state[keys.MODEL_LINK_ERROR] == note and keys.MODEL not in state


def test_no_model_link():
    state = {}
    assert links.apply_model({}, state, ALLOWED, ALLOWED[0]) is None and state == {}
