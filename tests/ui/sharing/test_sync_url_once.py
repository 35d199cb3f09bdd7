"""sync_url writes the parameters a step changed in one update (one message to the browser per click), and the URL
it leaves is the one written parameter by parameter: after steps, an undo, a reset and a settings change. The
session's parameters are worked out again only when the session (its identity or ``version``) or the settings
changed; the URL itself is compared on every call."""
from dataclasses import replace

import pytest

from autoreg_core import SamplingConfig, Session
from autoreg_ui.settings import SIDEBAR_DEFAULTS
from autoreg_ui.sharing import link_codec, links
from autoreg_ui.sharing.link_codec import PROMPT_ID, RECIPE_PARAMS, recipe_params, values


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


def _counting_recipes(monkeypatch) -> list:
    """Count how often sync_url works the session's parameters out (each is a walk over every step)."""
    worked = []
    real = links.recipe_of

    def recipe_of(session, config=None):
        worked.append(len(session.records))
        return real(session, config)

    monkeypatch.setattr(links, "recipe_of", recipe_of)
    return worked


def test_the_session_is_read_again_only_when_it_or_the_settings_changed(tab, monkeypatch):
    worked = _counting_recipes(monkeypatch)
    state, query = {}, Query()
    session = tab["session"]
    links.sync_url(state, query)
    links.sync_url(state, query)  # a rerun that changed nothing: the parameters are not worked out again
    assert len(worked) == 1 and values(query) == _expected(tab)
    for move in (lambda: session.step(tab["config"]), lambda: session.undo(), lambda: session.reset(),
                 lambda: tab.update(config=replace(SIDEBAR_DEFAULTS, temperature=0.3))):  # settings only
        before = len(worked)
        move()
        links.sync_url(state, query)
        links.sync_url(state, query)
        assert len(worked) == before + 1 and values(query) == _expected(tab)


def test_another_session_at_the_same_version_is_not_taken_for_the_last_one(tab, tiny):
    state, query = {}, Query()
    links.sync_url(state, query)
    tab["session"] = Session(tiny, "A different prompt")
    assert tab["session"].version == state[links.SESSION_PARAMS][1]  # same version: only its identity tells
    links.sync_url(state, query)
    assert values(query) == _expected(tab) and values(query)["prompt"] == ["A different prompt"]


def test_a_page_switch_that_emptied_the_url_gets_the_whole_link_back(tab, monkeypatch):
    worked = _counting_recipes(monkeypatch)
    state, query = {}, Query()
    tab["session"].step(tab["config"])
    links.sync_url(state, query)
    query.clear()  # the browser opened another page without the parameters
    links.sync_url(state, query)
    assert values(query) == _expected(tab) and len(worked) == 1


def test_a_long_prompt_stays_kept_while_the_tab_shows_it(tiny, monkeypatch):
    import autoreg_ui.state as state_module

    kept = []

    class Store:
        def keep(self, text, owner=""):
            kept.append((text, owner))
            return "0123456789ab"

    long_prompt = "A prompt taken as too long for a URL"  # kept on the server: the link holds its id
    monkeypatch.setattr(link_codec, "MAX_URL_PROMPT", 10)
    session = Session(tiny, long_prompt)
    monkeypatch.setattr(state_module, "current_session", lambda: session)
    monkeypatch.setattr(state_module, "current_config", lambda: SIDEBAR_DEFAULTS)
    monkeypatch.setattr("autoreg_core.allowed_models", lambda: [tiny.name])
    monkeypatch.setattr(links, "prompt_store", lambda: Store())
    monkeypatch.setattr(links, "tab_id", lambda: "tab")
    state, query = {}, Query()
    links.sync_url(state, query)
    links.sync_url(state, query)  # nothing changed, but the store hears of the prompt again (it stays the newest)
    assert kept == [(long_prompt, "tab")] * 2 and values(query) == {PROMPT_ID: ["0123456789ab"]}
