"""Recipes rebuild sessions exactly; bad recipes and files get a clear message."""
import json

import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.replay import (
    Recipe,
    ReplayError,
    Segment,
    export_session,
    import_session,
    recipe_from_dict,
    recipe_of,
    recipe_to_dict,
    replay,
)

A = SamplingConfig(temperature=1.2, top_k=40, top_p=0.9, seed=9, max_new_tokens=64, stop_sequences=("\n\n",))
B = SamplingConfig(temperature=0.6, min_p=0.05, repetition_penalty=1.3, seed=1, max_new_tokens=64)


def _session(tiny):
    """Steps under two settings, a forced token, and an undo in the middle."""
    s = Session(tiny, "Once upon a time")
    s.generate(4, A)
    s.force(" the", A)
    s.step(A)
    s.undo()
    s.generate(3, B)
    return s


def test_a_recipe_replays_the_same_tokens_and_numbers(tiny):
    s = _session(tiny)
    recipe = recipe_of(s)
    assert recipe.steps == 8 and [seg.start for seg in recipe.segments] == [1, 6]
    assert recipe.forced == {5: s.records[4].token_id} and recipe.seed == 9
    again = replay(tiny, recipe_from_dict(json.loads(json.dumps(recipe_to_dict(recipe)))))
    assert again.generated_ids == s.generated_ids and len(again.records) == 8
    assert [(r.prob, r.rank, r.forced) for r in again.records] == [(r.prob, r.rank, r.forced) for r in s.records]


def test_export_then_import_gives_an_identical_session(tiny):
    s = _session(tiny)
    data = json.loads(json.dumps(export_session(s)))
    assert [row["token_id"] for row in data["steps"]] == s.generated_ids
    seen = []
    back = import_session(tiny, data, on_step=seen.append)
    assert back.generated_ids == s.generated_ids and len(seen) == 8
    data["steps"][2]["token_id"] += 1
    with pytest.raises(ReplayError, match="different tokens"):
        import_session(tiny, data)


def test_an_empty_session_keeps_its_settings(tiny):
    recipe = recipe_of(Session(tiny, "Hi"), A)
    assert recipe.steps == 0 and recipe.segments == (Segment(1, A),)


@pytest.mark.parametrize("change, message", [
    ({"prompt": ""}, "no prompt"),
    ({"prompt": "x" * 30_000}, "at most"),
    ({"steps": 10**6}, "between 0 and"),
    ({"forced": {"2": 10**9}}, "not a token of this model"),
    ({"forced": {"99": 3}}, "the recipe has"),
    ({"segments": []}, "settings of the first step"),
    ({"segments": [{"start": 1, "config": {"temperature": "hot"}}]}, "wrong kind"),
    ({"segments": [{"start": 1, "config": {"evil": 1}}]}, "Unknown setting"),
    ({"forced": {"a": "b"}}, "malformed"),
])
def test_bad_recipes_are_refused_with_a_message(tiny, change, message):
    data = {**recipe_to_dict(recipe_of(_session(tiny))), **change}
    with pytest.raises(ReplayError, match=message):
        replay(tiny, recipe_from_dict(data))


def test_files_from_elsewhere_are_refused(tiny):
    with pytest.raises(ReplayError, match="not an autoreg session file"):
        import_session(tiny, {"format": "something else"})
    data = export_session(_session(tiny))
    data["model"] = "another-model"
    with pytest.raises(ReplayError, match="made with 'another-model'"):
        import_session(tiny, data)


def test_replay_can_be_stopped_and_keeps_what_ran(tiny):
    recipe = Recipe("The cat", False, 0, 10, (Segment(1, SamplingConfig(temperature=0, max_new_tokens=64)),))
    done = []
    s = replay(tiny, recipe, on_step=done.append, should_stop=lambda: len(done) >= 4)
    assert len(s.records) == 4
