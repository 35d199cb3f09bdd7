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


# ================================================================ the whole state in the URL
from dataclasses import replace  # noqa: E402

from autoreg_core import Session  # noqa: E402
from autoreg_core.replay import Recipe, ReplayError, Segment, recipe_of, replay  # noqa: E402

DEFAULT_PROMPT = "The cat sat on the"
NOW = replace(links.SIDEBAR_DEFAULTS, temperature=1.3, top_k=20, seed=7)  # the sidebar's current settings
EARLIER = replace(links.SIDEBAR_DEFAULTS, temperature=0.3, min_p=0.05, repetition_penalty=1.25,
                  stop_sequences=("\n\n", "The end"), seed=7)


class Store:
    """A prompt store for tests (the app's is one per server process)."""

    def __init__(self):
        self.store = links.PromptStore(limit=3)

    def keep(self, text):
        return self.store.keep(text)


def _link_of(params: dict) -> links.Link:
    link, notes = links.read(params)
    assert notes == []
    return link


def _unseeded(recipe: Recipe) -> tuple:
    return (recipe.prompt, recipe.chat, recipe.seed, recipe.steps, recipe.forced,
            tuple((s.start, replace(s.config, seed=0)) for s in recipe.segments))


def test_every_step_under_the_current_settings_needs_no_segment():
    recipe = Recipe("Once upon a time", True, 7, 5, (Segment(1, NOW),), {2: 1234, 5: 42})
    params = links.recipe_params(recipe, NOW, DEFAULT_PROMPT, Store().keep)
    assert params == {"prompt": "Once upon a time", "chat": "1", "steps": "5", "forced": "2-1234.5-42"}
    link = _link_of(params)
    assert link == links.Link(prompt="Once upon a time", chat=True, steps=5, forced={2: 1234, 5: 42})
    assert _unseeded(links.recipe_of_link(link, link.prompt, NOW, 49152)) == _unseeded(recipe)


def test_earlier_settings_travel_as_segments_and_the_seed_when_the_sidebar_moved():
    recipe = Recipe("Hi", False, 3, 9, (Segment(1, EARLIER), Segment(4, NOW), Segment(8, EARLIER)), {})
    params = links.recipe_params(recipe, replace(NOW, seed=11), DEFAULT_PROMPT, Store().keep)
    assert params["seg"][0].startswith("1~t0.3~m0.05~r1.25~s")
    assert params["seg"][1] == "4~t1.3~k20" and params["run_seed"] == "3"
    assert set(params) == {"prompt", "steps", "seg", "run_seed"}
    link = _link_of(params)
    rebuilt = links.recipe_of_link(link, link.prompt, replace(NOW, seed=11), 49152)
    assert rebuilt.seed == 3 and [s.config.stop_sequences for s in rebuilt.segments] == [EARLIER.stop_sequences, (),
                                                                                          EARLIER.stop_sequences]
    assert _unseeded(rebuilt) == _unseeded(recipe)


def test_settings_moved_after_the_last_step_keep_the_steps_own_settings():
    recipe = Recipe("Hi", False, 7, 2, (Segment(1, NOW),), {})
    params = links.recipe_params(recipe, replace(NOW, temperature=2.0), DEFAULT_PROMPT, Store().keep)
    assert params["seg"] == ["1~t1.3~k20"]


def test_the_default_prompt_with_no_steps_is_an_empty_link():
    recipe = Recipe(DEFAULT_PROMPT, False, 0, 0, (Segment(1, NOW),), {})
    assert links.recipe_params(recipe, NOW, DEFAULT_PROMPT, Store().keep) == {}
    assert links.read({}) == (None, [])


def test_a_long_prompt_is_kept_on_the_server_under_a_short_id():
    store = Store()
    text = "Once upon a time, " * 200
    params = links.recipe_params(Recipe(text, False, 0, 0, (Segment(1, NOW),), {}), NOW, DEFAULT_PROMPT, store.keep)
    assert list(params) == ["pid"] and len(params["pid"]) == 12
    assert store.store.get(params["pid"]) == text
    assert _link_of(params) == links.Link(prompt_id=params["pid"])
    for other in ("a", "b", "c"):  # the store is bounded: the oldest prompt goes first
        store.keep(other)
    assert store.store.get(params["pid"]) is None and store.store.get("x" * 12) is None


def test_a_link_rebuilds_a_session_exactly(tiny):
    """Step under two settings with a forced token, write the link, read it back, replay: the same numbers."""
    s = Session(tiny, "Once upon a time")
    s.generate(3, EARLIER)
    s.force(" the", EARLIER)
    s.generate(4, NOW)
    params = links.recipe_params(recipe_of(s, NOW), NOW, DEFAULT_PROMPT, Store().keep)
    link = _link_of(params)
    again = replay(tiny, links.recipe_of_link(link, link.prompt, NOW, tiny.spec.vocab))
    assert again.generated_ids == s.generated_ids and len(again.records) == 8
    assert [(r.prob, r.prob_filtered, r.rank, r.logprob, r.forced) for r in again.records] == \
           [(r.prob, r.prob_filtered, r.rank, r.logprob, r.forced) for r in s.records]


def test_read_on_load_applies_a_link_once_and_not_what_the_app_wrote_itself():
    state = {}
    query = {"prompt": "Hello", "steps": "2"}
    assert links.read_on_load(state, query) == []
    assert state[keys.LINK_PENDING] == ("link", links.Link(prompt="Hello", steps=2))
    del state[keys.LINK_PENDING]
    assert links.read_on_load(state, query) == [] and keys.LINK_PENDING not in state  # the same link: once
    state[keys.LINK_SEEN] = links._own({"prompt": ["Hello"], "steps": ["3"]})  # what sync_url wrote after a step
    assert links.read_on_load(state, {"prompt": "Hello", "steps": "3"}) == [] and keys.LINK_PENDING not in state
    links.read_on_load(state, {"prompt": "Hello", "steps": "1"})  # the back button, or a pasted link
    assert state[keys.LINK_PENDING] == ("link", links.Link(prompt="Hello", steps=1))


def test_messages_about_the_rest_of_a_link_show_once():
    state = {}
    assert links.read_on_load(state, {"colour": "red"}) == ["The link has 1 part(s) this app does not know: "
                                                            "'colour'; ignored."]
    assert links.read_on_load(state, {"colour": "red"}) == []


def test_a_forced_token_that_is_not_a_token_is_refused_before_any_step(tiny):
    link = _link_of({"prompt": "Hi", "steps": "2", "forced": f"2-{tiny.spec.vocab}"})
    with pytest.raises(ReplayError, match=f"not a token of this model \\(ids 0–{tiny.spec.vocab - 1}\\)"):
        replay(tiny, links.recipe_of_link(link, link.prompt, NOW, tiny.spec.vocab))


LONG = "x" * 40
FUZZ = [  # (query, what the message must say, what is still rebuilt: None / the prompt alone)
    ({"steps": "-1"}, "number of steps '-1' is not a whole number", "default"),
    ({"steps": "1e3"}, "number of steps '1e3' is not a whole number", "default"),
    ({"steps": "99999"}, "number of steps 99999 is outside 0–2048", "default"),
    ({"steps": "3", "forced": "2:5"}, "forced tokens '2?5' are not STEP-TOKEN pairs", "default"),
    ({"steps": "3", "forced": "4-5"}, "forces a token at step 4, but it runs 3 steps", "default"),
    ({"steps": "3", "forced": "0-5"}, "forces a token at step 0, but it runs 3 steps", "default"),
    ({"steps": "3", "forced": "2-5.2-6"}, "forces step 2 twice", "default"),
    ({"steps": "3", "forced": "2-" + "9" * 12}, "are not STEP-TOKEN pairs", "default"),
    ({"steps": "3", "seg": "2~t0.5"}, "must start at step 1", "default"),
    ({"steps": "3", "seg": ["1", "1"]}, "must start at step 1 and rise", "default"),
    ({"steps": "3", "seg": "1~q5"}, "unknown setting 'q5'", "default"),
    ({"steps": "3", "seg": "1~t9"}, "temperature 9 is outside 0–3", "default"),
    ({"steps": "3", "seg": "1~tnan"}, "temperature 'nan' is not a number", "default"),
    ({"steps": "3", "seg": "1~kx"}, "top-k 'x' is not a whole number", "default"),
    ({"steps": "3", "seg": "1~s!!"}, "stop sequences cannot be read", "default"),
    ({"steps": "3", "seg": "x~t1"}, "does not start with a step number", "default"),
    ({"steps": "3", "seg": ["1"] * 70}, "at most 64 are read", "default"),
    ({"steps": "3", "run_seed": "-4"}, "seed '-4' is not a whole number", "default"),
    ({"steps": "3", "forced": "1-1" + ".1-1" * 9000}, "characters long; at most 32,000", None),
    ({"prompt": "<script>alert(1)</script>", "chat": "maybe"}, "chat mode 'maybe' is not 1 or 0", None),
    ({"prompt": "a" * 2001}, "prompt is 2,001 characters long", None),
    ({"prompt": "   "}, "prompt is empty", None),
    ({"pid": "../../etc/passwd"}, "prompt id '../../etc/passwd' is not an id", None),
    ({"pid": "/etc/shadow" * 3}, "prompt id '/etc/shadow/etc/…' is not an id", None),
    ({"cfg_temperature": "abc"}, "temperature 'abc' is not a number. The sidebar starts from its default, 0.8.",
     "nothing"),
    ({"cfg_top_k": "-5"}, "top-k '-5' is not a whole number", "nothing"),
    ({"cfg_top_p": "1.5"}, "top-p 1.5 is outside 0–1", "nothing"),
    ({"cfg_seed": "1" * 20}, "is not a whole number", "nothing"),
    ({"cfg_max_new": "0"}, "max new tokens 0 is outside 1–2048", "nothing"),
    ({"cfg_stops": "x" * 40_000}, "stop sequences are 40,000 characters long", "nothing"),
    ({"present": "please"}, "presenter mode 'please' is not 1 or 0", "nothing"),
    ({"<img src=x onerror=alert(1)>": "1"}, "part(s) this app does not know: '?img?src?x?onerr…'", "nothing"),
    ({f"k{i}": "1" for i in range(30)}, "30 part(s) this app does not know: 'k0', 'k1', 'k10', 'k11', 'k12' …",
     "nothing"),
    ({"**bold**": "[x](javascript:alert(1))", LONG: LONG}, "2 part(s) this app does not know", "nothing"),
]


@pytest.mark.parametrize("query,said,kept", FUZZ, ids=[f"fuzz{i}" for i in range(len(FUZZ))])
def test_hostile_and_malformed_links_get_a_message_and_no_exception(query, said, kept):
    link, notes = links.read(query)
    assert len(notes) == 1 and said in notes[0], notes
    markup = set("<>`[]*") & set("".join(f"{k}{v}" for k, v in query.items()))
    assert not markup & set(notes[0])  # what the note quotes from the link is defanged
    assert "<script" not in notes[0] and "javascript:" not in notes[0] and "onerror=" not in notes[0]
    if kept is None:
        assert link is None
    elif kept == "default":  # the steps were refused: only the prompt (none given: the app's default) stays
        assert link == links.Link()
    else:
        assert link is None


def test_read_never_raises_on_random_junk():
    import random

    rng = random.Random(0)
    alphabet = "0123456789-.~_:,abcdefghijklmnopqrstuvwxyz<>\"'%&=?/\\\x00é🙂 "
    names = list(links.KNOWN_PARAMS) + ["x", "seg", "forced"]
    for _ in range(2000):
        query = {rng.choice(names): "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
                 for _ in range(rng.randint(1, 4))}
        link, notes = links.read(query)
        assert all(isinstance(n, str) and n for n in notes)
        assert link is None or isinstance(link, links.Link)
        if link is not None and link.steps:
            assert all(1 <= step <= link.steps for step in link.forced)


# ---------------------------------------------------------------- the whole app, under AppTest
APP = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "app.py")


def _app(query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def test_a_link_written_by_the_app_rebuilds_the_same_session(embedded):
    at = _app({"cfg_temperature": "1.3", "cfg_top_k": "20", "cfg_seed": "7"})
    assert not at.exception and at.slider(key=keys.CFG_TEMPERATURE).value == 1.3
    at.button(key="step_next").click().run()
    at.session_state[keys.STEP_VIEW] = "Force the next token"  # the view with the force box
    at.run()
    at.text_input(key=keys.FORCE_TEXT).input(" banana").run()
    at.button(key=keys.FORCE_BUTTON).click().run()
    at.button(key="step_next").click().run()
    first = at.session_state[keys.SESSION]
    written = dict(at.query_params)
    assert written == {"cfg_temperature": "1.3", "cfg_top_k": "20", "cfg_seed": "7", "prompt": "The cat sat on the",
                       "steps": "3", "forced": f"2-{first.records[1].token_id}"}
    again = _app(written)
    assert not again.exception and not again.warning and not again.error
    assert [s.value for s in again.success] == ["Rebuilt from the link: the prompt and 3 steps, replayed exactly."]
    second = again.session_state[keys.SESSION]
    assert second.generated_ids == first.generated_ids and len(second.records) == 3
    assert [(r.prob, r.logprob, r.rank, r.forced) for r in second.records] == \
           [(r.prob, r.logprob, r.rank, r.forced) for r in first.records]
    assert dict(again.query_params) == written


def test_a_hostile_link_gives_messages_and_a_working_page(embedded):
    at = _app({"prompt": "<script>alert(1)</script>", "steps": "2", "forced": "1-99999999",
               "cfg_temperature": "NaN", "<img src=x onerror=alert(1)>": "1", "present": "yes please"})
    assert not at.exception
    assert at.title[0].value == "Step through generation"
    warned = " ".join(w.value for w in at.warning)
    assert "temperature 'NaN' is not a number" in warned and "part\\(s\\) this app does not know" in warned
    assert "presenter mode 'yes?please' is not 1 or 0" in warned
    assert [e.value.replace("\\", "") for e in at.error] == [
        "The token forced at step 1 (id 99999999) is not a token of this model (ids 0–49151). The link was not "
        "replayed."]
    assert all("<img" not in w.value and "<script" not in w.value for w in list(at.warning) + list(at.error))
    assert dict(at.query_params) == {}  # the URL keeps only what it means: here, the default session
    at.button(key="step_next").click().run()
    assert not at.exception and len(at.session_state[keys.SESSION].records) == 1


class _Bar:
    def __init__(self, fail: bool):
        self.fail = fail

    def progress(self, *args, **kwargs):
        if self.fail:
            raise KeyboardInterrupt("a rerun interrupts the replay")

    def empty(self):
        pass


class _Page:
    """Just what replay_pending draws: a progress bar and one alert."""

    def __init__(self, fail: bool = False):
        self.fail, self.alerts = fail, []

    def progress(self, *args, **kwargs):
        return _Bar(self.fail)

    def success(self, text):
        self.alerts.append(("success", text))

    def error(self, text):
        self.alerts.append(("error", text))


def test_a_replay_interrupted_by_a_rerun_is_done_again_on_the_next_run(tiny, monkeypatch):
    link = links.Link(prompt="Once upon a time", steps=3)
    state = {keys.LINK_PENDING: ("link", link), keys.CONFIG: replace(NOW, temperature=0.0)}
    monkeypatch.setattr(links, "st", _Page(fail=True))
    with pytest.raises(KeyboardInterrupt):
        links.replay_pending(tiny, state)
    assert state[keys.LINK_PENDING] == ("link", link) and keys.SESSION not in state
    page = _Page()
    monkeypatch.setattr(links, "st", page)
    links.replay_pending(tiny, state)
    assert keys.LINK_PENDING not in state and len(state[keys.SESSION].records) == 3
    assert (state[keys.PROMPT_KEPT], state[keys.PROMPT_BOX], state[keys.CHAT_KEPT]) == ("Once upon a time",) * 2 + (False,)
    assert page.alerts == [("success", "Rebuilt from the link: the prompt and 3 steps, replayed exactly.")]


def test_a_bad_replay_is_said_once_and_dropped(tiny, monkeypatch):
    state = {keys.LINK_PENDING: ("link", links.Link(prompt_id="0123456789ab")), keys.CONFIG: NOW}
    page = _Page()
    monkeypatch.setattr(links, "st", page)
    links.replay_pending(tiny, state)
    assert keys.LINK_PENDING not in state and keys.SESSION not in state
    [(level, text)] = page.alerts
    assert level == "error" and "long prompt kept on the server that made it" in text
