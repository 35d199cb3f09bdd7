"""The link codec without Streamlit: layer/head values, the recipe written to a URL and read back,
and hostile or malformed links (plain dicts as queries)."""
from dataclasses import replace

import pytest

from autoreg_core import Session
from autoreg_core.engine.replay import Recipe, ReplayError, Segment, recipe_of, replay
from autoreg_ui import settings
from autoreg_ui.sharing import link_codec, link_params
from autoreg_ui.sharing.prompt_store import PromptStore

N_LAYERS, N_HEADS = 30, 9


@pytest.mark.parametrize("raw,expected", [
    ("3", 3), ("0", 0), ("29", 29), (" 7 ", 7), ("+4", 4), ("007", 7), (5, 5),
    (None, None), ("", None), ("   ", None)])
def test_good_or_empty_layer(raw, expected):
    assert link_codec.parse_index(raw, N_LAYERS, "layer") == (expected, None)


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
    assert link_codec.parse_index(raw, N_LAYERS, "layer") == (None, message)


@pytest.mark.parametrize("raw,expected", [("mean", -1), ("MEAN", -1), ("avg", -1), (" average ", -1),
                                          ("0", 0), ("8", 8)])
def test_good_head(raw, expected):
    assert link_codec.parse_index(raw, N_HEADS, "head", allow_mean=True) == (expected, None)
    assert link_codec.MEAN == -1


@pytest.mark.parametrize("raw,message", [
    ("9", "The head 9 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."),
    ("-1", "The head -1 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."),
    ("all", "The head 'all' in the link is not a whole number or 'mean'; it was ignored."),
])
def test_bad_head_gets_a_clear_message(raw, message):
    assert link_codec.parse_index(raw, N_HEADS, "head", allow_mean=True) == (None, message)



DEFAULT_PROMPT = "The cat sat on the"
NOW = replace(settings.SIDEBAR_DEFAULTS, temperature=1.3, top_k=20, seed=7)  # the sidebar's current settings
EARLIER = replace(settings.SIDEBAR_DEFAULTS, temperature=0.3, min_p=0.05, repetition_penalty=1.25,
                  stop_sequences=("\n\n", "The end"), seed=7)


class Store:
    """A prompt store for tests (the app's is one per server process): about 10 KB in all."""

    def __init__(self):
        self.store = PromptStore(per_tab_bytes=10_000, total_bytes=10_000)

    def keep(self, text, owner="tab"):
        return self.store.keep(text, owner)


def _link_of(params: dict) -> link_codec.Link:
    link, notes = link_codec.read(params)
    assert notes == []
    return link


def _unseeded(recipe: Recipe) -> tuple:
    return (recipe.prompt, recipe.chat, recipe.seed, recipe.steps, recipe.forced,
            tuple((s.start, replace(s.config, seed=0)) for s in recipe.segments))


def test_every_step_under_the_current_settings_needs_no_segment():
    recipe = Recipe("Once upon a time", True, 7, 5, (Segment(1, NOW),), {2: 1234, 5: 42})
    params = link_codec.recipe_params(recipe, NOW, DEFAULT_PROMPT, Store().keep)
    assert params == {"prompt": "Once upon a time", "chat": "1", "steps": "5", "forced": "2-1234.5-42"}
    link = _link_of(params)
    assert link == link_codec.Link(prompt="Once upon a time", chat=True, steps=5, forced={2: 1234, 5: 42})
    assert _unseeded(link_codec.recipe_of_link(link, link.prompt, NOW, 49152)) == _unseeded(recipe)


def test_earlier_settings_travel_as_segments_and_the_seed_when_the_sidebar_moved():
    recipe = Recipe("Hi", False, 3, 9, (Segment(1, EARLIER), Segment(4, NOW), Segment(8, EARLIER)), {})
    params = link_codec.recipe_params(recipe, replace(NOW, seed=11), DEFAULT_PROMPT, Store().keep)
    assert params["seg"][0].startswith("1~t0.3~m0.05~r1.25~s")
    assert params["seg"][1] == "4~t1.3~k20" and params["run_seed"] == "3"
    assert set(params) == {"prompt", "steps", "seg", "run_seed"}
    link = _link_of(params)
    rebuilt = link_codec.recipe_of_link(link, link.prompt, replace(NOW, seed=11), 49152)
    assert rebuilt.seed == 3 and [s.config.stop_sequences for s in rebuilt.segments] == [EARLIER.stop_sequences, (),
                                                                                          EARLIER.stop_sequences]
    assert _unseeded(rebuilt) == _unseeded(recipe)


def test_settings_moved_after_the_last_step_keep_the_steps_own_settings():
    recipe = Recipe("Hi", False, 7, 2, (Segment(1, NOW),), {})
    params = link_codec.recipe_params(recipe, replace(NOW, temperature=2.0), DEFAULT_PROMPT, Store().keep)
    assert params["seg"] == ["1~t1.3~k20"]


def test_the_default_prompt_with_no_steps_is_an_empty_link():
    recipe = Recipe(DEFAULT_PROMPT, False, 0, 0, (Segment(1, NOW),), {})
    assert link_codec.recipe_params(recipe, NOW, DEFAULT_PROMPT, Store().keep) == {}
    assert link_codec.read({}) == (None, [])


def test_a_long_prompt_is_kept_on_the_server_under_a_short_id():
    store = Store()
    text = "Once upon a time, " * 200
    recipe = Recipe(text, False, 0, 0, (Segment(1, NOW),), {})
    params = link_codec.recipe_params(recipe, NOW, DEFAULT_PROMPT, store.keep)
    assert list(params) == ["pid"] and len(params["pid"]) == 12
    assert store.store.get(params["pid"]) == text
    assert _link_of(params) == link_codec.Link(prompt_id=params["pid"])
    for other in ("a", "b", "c"):  # the store is bounded by bytes: the oldest prompt goes first
        store.keep(other * 3000, owner=other)
    assert store.store.get(params["pid"]) is None and store.store.get("x" * 12) is None




def test_a_link_rebuilds_a_session_exactly(tiny):
    """Step under two settings with a forced token, write the link, read it back, replay: the same numbers."""
    s = Session(tiny, "Once upon a time")
    s.generate(3, EARLIER)
    s.force(" the", EARLIER)
    s.generate(4, NOW)
    params = link_codec.recipe_params(recipe_of(s, NOW), NOW, DEFAULT_PROMPT, Store().keep)
    link = _link_of(params)
    again = replay(tiny, link_codec.recipe_of_link(link, link.prompt, NOW, tiny.spec.vocab))
    assert again.generated_ids == s.generated_ids and len(again.records) == 8
    assert [(r.prob, r.prob_filtered, r.rank, r.logprob, r.forced) for r in again.records] == \
           [(r.prob, r.prob_filtered, r.rank, r.logprob, r.forced) for r in s.records]



def test_a_forced_token_that_is_not_a_token_is_refused_before_any_step(tiny):
    link = _link_of({"prompt": "Hi", "steps": "2", "forced": f"2-{tiny.spec.vocab}"})
    with pytest.raises(ReplayError, match=f"not a token of this model \\(ids 0–{tiny.spec.vocab - 1}\\)"):
        replay(tiny, link_codec.recipe_of_link(link, link.prompt, NOW, tiny.spec.vocab))


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
    link, notes = link_codec.read(query)
    assert len(notes) == 1 and said in notes[0], notes
    markup = set("<>`[]*") & set("".join(f"{k}{v}" for k, v in query.items()))
    assert not markup & set(notes[0])  # what the note quotes from the link is defanged
    assert "<script" not in notes[0] and "javascript:" not in notes[0] and "onerror=" not in notes[0]
    if kept is None:
        assert link is None
    elif kept == "default":  # the steps were refused: only the prompt (none given: the app's default) stays
        assert link == link_codec.Link()
    else:
        assert link is None


def test_read_never_raises_on_random_junk():
    import random

    rng = random.Random(0)
    alphabet = "0123456789-.~_:,abcdefghijklmnopqrstuvwxyz<>\"'%&=?/\\\x00é🙂 "
    names = list(link_codec.KNOWN_PARAMS | link_params.names()) + ["x", "seg", "forced"]
    for _ in range(2000):
        query = {rng.choice(names): "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
                 for _ in range(rng.randint(1, 4))}
        link, notes = link_codec.read(query)
        assert all(isinstance(n, str) and n for n in notes)
        assert link is None or isinstance(link, link_codec.Link)
        if link is not None and link.steps:
            assert all(1 <= step <= link.steps for step in link.forced)




def test_a_link_lists_every_token_when_steps_shared_passes_and_reads_them_back():
    from autoreg_core.engine.config import SamplingConfig
    from autoreg_core.engine.replay import Recipe, Segment

    recipe = Recipe(prompt="Hi", chat=False, seed=0, steps=3, segments=(Segment(1, SamplingConfig()),),
                    tokens=(12, 7042, 13))
    params = link_codec.recipe_params(recipe, SamplingConfig(), "default", lambda p: "x")
    assert params["ids"] == "12.7042.13"
    link, notes = link_codec.read({k: v for k, v in params.items()})
    assert notes == [] and link.tokens == (12, 7042, 13)
    assert link_codec.recipe_of_link(link, "Hi", SamplingConfig(), 50_000).tokens == (12, 7042, 13)
    bad, notes = link_codec.read({"prompt": "Hi", "steps": "3", "ids": "1.2"})
    assert bad.steps == 0 and "lists 2 token ids for its 3 steps" in notes[0]
