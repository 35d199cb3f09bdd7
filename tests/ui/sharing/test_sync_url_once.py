"""sync_url writes the parameters a step changed in one update (one message to the browser per click), and the URL
it leaves is the one written parameter by parameter: after steps, an undo, a reset and a settings change."""
from dataclasses import replace

import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui.settings import SIDEBAR_DEFAULTS
from autoreg_ui.sharing import links
from autoreg_ui.sharing.link_codec import RECIPE_PARAMS, recipe_params, values


class Query(dict):
    """A query-params stand-in that counts the writes that would each send the browser a message."""

    writes = 0

    def __setitem__(self, key, value):
        Query.writes += 1
        super().__setitem__(key, value)

    def update(self, other=(), **kwds):
        Query.writes += 1
        for key, value in dict(other, **kwds).items():
            super().__setitem__(key, value)


@pytest.fixture
def tab(tiny, monkeypatch):
    import autoreg_ui.state as state_module

    box = {"session": Session(tiny, "The cat sat on"), "config": SIDEBAR_DEFAULTS}
    monkeypatch.setattr(state_module, "current_session", lambda: box["session"])
    monkeypatch.setattr(state_module, "current_config", lambda: box["config"])
    monkeypatch.setattr(state_module, "allowed_models", lambda: [tiny.name])
    return box


def _expected(box) -> dict:
    from autoreg_core.engine.replay import recipe_of
    from autoreg_ui.state import DEFAULT_PROMPT

    wanted = recipe_params(recipe_of(box["session"], box["config"]), box["config"], DEFAULT_PROMPT, lambda p: p)
    return {k: ([v] if isinstance(v, str) else list(v)) for k, v in wanted.items() if k in RECIPE_PARAMS}


def test_each_sync_is_one_write_and_leaves_the_whole_link(tab):
    state, query = {}, Query()
    session = tab["session"]
    moves = [lambda: session.step(tab["config"]), lambda: session.step(tab["config"]), lambda: session.undo(),
             lambda: tab.update(config=replace(SIDEBAR_DEFAULTS, temperature=0.3, seed=5)),
             lambda: session.step(tab["config"]), lambda: session.reset(), lambda: session.step(tab["config"])]
    for move in moves:
        move()
        Query.writes = 0
        links.sync_url(state, query)
        assert Query.writes <= 1
        assert values(query) == _expected(tab)
    Query.writes = 0
    links.sync_url(state, query)  # nothing changed since: nothing written
    assert Query.writes == 0 and values(query) == _expected(tab)
    assert values(query)["steps"] == ["1"]


def test_a_parameter_no_longer_wanted_is_removed(tab):
    query = Query(steps="4", seg="junk", nonsense="1")  # stale recipe values, and a parameter the app does not know
    tab["session"].step(SamplingConfig())
    links.sync_url({}, query)
    assert values(query) == _expected(tab)
