"""The teacher's text on a replica without the teacher's tab: rebuilt once, then extended step by step as the
teacher acts; every text equals a full replay of the same recipe token for token (whole sequences, lengths,
probabilities and the next token's logits); a reset, undo or other change is replayed in full."""
import threading

import pytest
import torch

from autoreg_core import SamplingConfig, Session
from autoreg_core.engine.replay import ReplayError, recipe_from_dict, recipe_of, recipe_to_dict, replay
from autoreg_ui.classroom import replica_text
from autoreg_ui.classroom.replica_text import EXTENDED, HELD, REPLAYED, ReplicaTexts, extends

A = SamplingConfig(temperature=1.1, top_k=30, seed=5, max_new_tokens=64)
B = SamplingConfig(temperature=0.7, top_p=0.9, seed=5, max_new_tokens=64)


def _recipe(session, config=A) -> dict:
    return recipe_to_dict(recipe_of(session.snapshot(), config))


def _same_as_a_full_replay(tiny, snapshot, recipe: dict) -> None:
    full = replay(tiny, recipe_from_dict(recipe))
    full.next_pipeline(recipe_from_dict(recipe).config_at(max(1, len(full.records))))
    assert len(snapshot.ids) == len(full.ids) and list(snapshot.ids) == full.ids
    assert list(snapshot.generated_ids) == full.generated_ids and len(snapshot.records) == len(full.records)
    assert [(r.token_id, r.prob, r.rank, r.forced) for r in snapshot.records] == [
        (r.token_id, r.prob, r.rank, r.forced) for r in full.records]
    assert torch.equal(snapshot.pending_logits, full.pending_logits)


@pytest.fixture
def counted_steps(monkeypatch):
    """How many decode steps ran (replays and extensions both step a Session)."""
    calls = []
    original = Session.step

    def step(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Session, "step", step)
    return calls


def test_the_teachers_steps_extend_the_held_text_and_match_a_full_replay(tiny, counted_steps):
    teacher, texts = Session(tiny, "Once upon a time"), ReplicaTexts()
    teacher.generate(3, A)
    recipe = _recipe(teacher)
    counted_steps.clear()
    snapshot, how = texts.snapshot(tiny, "ABC234", recipe)
    assert how == REPLAYED and len(counted_steps) == 3
    _same_as_a_full_replay(tiny, snapshot, recipe)
    for action in (lambda: teacher.step(A), lambda: teacher.generate(2, A), lambda: teacher.force(" the", A),
                   lambda: teacher.generate(2, B)):  # steps, a forced token, new settings for new steps
        action()
        recipe = _recipe(teacher, B)
        held_steps = len(texts._held["ABC234"].snapshot.records)
        counted_steps.clear()
        snapshot, how = texts.snapshot(tiny, "ABC234", recipe)
        assert how == EXTENDED and len(counted_steps) == recipe["steps"] - held_steps
        assert list(snapshot.generated_ids) == teacher.generated_ids
        _same_as_a_full_replay(tiny, snapshot, recipe)
        counted_steps.clear()
        again, how = texts.snapshot(tiny, "ABC234", recipe)
        assert how == HELD and again is snapshot and counted_steps == []
    assert len(snapshot.records) == 9 and texts.counts == {HELD: 4, EXTENDED: 4, REPLAYED: 1}


@pytest.mark.parametrize("change", ["undo", "reset", "prompt", "seed", "settings of a held step"])
def test_anything_but_more_steps_is_replayed_in_full(tiny, change, counted_steps):
    teacher, texts = Session(tiny, "The cat sat"), ReplicaTexts()
    teacher.generate(4, A)
    texts.snapshot(tiny, "K", _recipe(teacher))
    if change == "undo":
        teacher.undo()
        recipe = _recipe(teacher)
    elif change == "reset":
        teacher.reset()
        teacher.generate(5, B)  # (a reset that retook the same steps would be an extension, rightly)
        recipe = _recipe(teacher, B)
    elif change == "prompt":
        teacher = Session(tiny, "The dog sat")
        teacher.generate(5, A)
        recipe = _recipe(teacher)
    elif change == "seed":
        recipe = _recipe(teacher) | {"seed": 6, "steps": 4}
    else:
        recipe = _recipe(teacher)
        recipe["segments"][0]["config"]["temperature"] = 0.3
    counted_steps.clear()
    snapshot, how = texts.snapshot(tiny, "K", recipe)
    assert how == REPLAYED and len(counted_steps) == recipe["steps"]
    _same_as_a_full_replay(tiny, snapshot, recipe)


def test_extends_compares_every_held_step():
    teacher = recipe_from_dict({"prompt": "x", "seed": 1, "steps": 2, "forced": {"2": 7},
                                "segments": [{"start": 1, "config": {"temperature": 1.0}}]})
    more = recipe_from_dict({"prompt": "x", "seed": 1, "steps": 4, "forced": {"2": 7, "4": 9},
                             "segments": [{"start": 1, "config": {"temperature": 1.0}},
                                          {"start": 3, "config": {"temperature": 0.5}}]})
    assert extends(teacher, teacher) and extends(teacher, more) and not extends(more, teacher)
    assert not extends(teacher, recipe_from_dict(recipe_to_dict(more) | {"forced": {"2": 8}}))
    assert not extends(teacher, recipe_from_dict(recipe_to_dict(more) | {"chat": True}))
    assert not extends(recipe_from_dict(recipe_to_dict(teacher) | {"tokens": [1, 7]}),
                       recipe_from_dict(recipe_to_dict(more) | {"tokens": [2, 7, 3, 9]}))


def test_many_followers_at_once_cost_one_rebuild(tiny, counted_steps):
    teacher, texts = Session(tiny, "Once upon a time"), ReplicaTexts()
    teacher.generate(6, A)
    recipe = _recipe(teacher)
    counted_steps.clear()
    got = []
    threads = [threading.Thread(target=lambda: got.append(texts.snapshot(tiny, "C", recipe))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(counted_steps) == 6 and sorted(how for _, how in got) == [HELD] * 7 + [REPLAYED]
    assert len({id(s) for s, _ in got}) == 1


def test_a_bad_recipe_is_refused_and_forgotten_classes_are_rebuilt(tiny):
    texts = ReplicaTexts(kept=1)
    with pytest.raises(ReplayError):
        texts.snapshot(tiny, "C", {"prompt": "", "steps": 0})
    teacher = Session(tiny, "Hello")
    teacher.generate(2, A)
    recipe = _recipe(teacher)
    assert texts.snapshot(tiny, "C", recipe)[1] == REPLAYED
    assert texts.snapshot(tiny, "D", recipe)[1] == REPLAYED  # only one class kept: C goes
    assert texts.snapshot(tiny, "C", recipe)[1] == REPLAYED
    texts.forget("C")
    assert texts.snapshot(tiny, "C", recipe)[1] == REPLAYED
    assert replica_text.texts() is replica_text.texts()
