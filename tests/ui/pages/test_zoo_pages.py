"""Every page with each family of the model zoo loaded: opened, Next token pressed, every section opened and its
main actions run, with no exception and no error shown. A view that does not apply to a model says why in one
sentence (a caption or an info box), never an error."""
from __future__ import annotations

import pytest
from conftest import ROOT

from autoreg_ui import keys, site_pages
from tests import zoo

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("one_thread")]
TIMEOUT = 300

# the tabs of the pages that draw one section at a time: (its key, its labels)
SECTIONS = {
    "step": ("step_view", ["This step's distribution", "Force the next token", "The chain rule, running", "History"]),
    "attention": ("att_section", ["1 · Where it looked", "2 · Causal triangle", "3 · Grouped-query attention",
                                  "4 · KV cache", "5 · Memory calculator", "6 · Prefill vs decode"]),
    "sampling": ("lab_view", ["The pipeline, stage by stage", "The draw", "Draw many", "Temperature sweep"]),
    "hood": ("hood_section", ["1 · The training loss", "2 · Positions: rotary embeddings and the cache",
                              "3 · Nondeterminism and batch invariance"]),
}
# a button is a page's main action when its key ends so (runs, steps, Undo, recomputing, forcing a token)
ACTIONS = ("_run", "_next", "_undo", "_recompute", "force")
STEPS_PAST_THE_WINDOW = 3


def _ok(at, where: str):
    assert not at.exception, f"{where}: {[e.value for e in at.exception]}"
    errors = [e.value for e in at.error]
    assert not errors, f"{where}: {errors}"
    return at


def _open(folder: str, url_path: str, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("AUTOREG_ALLOWED_MODELS", folder)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state[keys.MODEL] = folder
    _ok(at.run(), "first run")
    at.switch_page(site_pages.file(url_path))
    return _ok(at.run(), url_path)


def _buttons(at) -> list[str]:
    return [b.key for b in at.button if b.key and not b.disabled and b.key.endswith(ACTIONS)]


def _press(at, key: str, where: str) -> None:
    at.button(key=key).click()
    _ok(at.run(), f"{where}: {key}")


def _sweep(at, url_path: str) -> list[str]:
    """Next token a few times, then each section opened and each of its actions pressed once."""
    pressed = []
    nexts = [k for k in _buttons(at) if k.endswith("_next")]
    for key in nexts[:1] * STEPS_PAST_THE_WINDOW:
        _press(at, key, url_path)
        pressed.append(key)
    section_key, labels = SECTIONS.get(url_path, (None, [None]))
    for label in labels:
        if label is not None:
            at.session_state[section_key] = label
            _ok(at.run(), f"{url_path} · {label}")
        for key in _buttons(at):
            if key not in pressed:
                _press(at, key, f"{url_path} · {label}")
                pressed.append(key)
    return pressed


@pytest.mark.parametrize("url_path", [p.url_path for p in site_pages.SITE_PAGES])
@pytest.mark.parametrize("family", zoo.FAMILIES)
def test_every_page_works_on_every_family(family, url_path, monkeypatch):
    at = _open(str(zoo.folder(family)), url_path, monkeypatch)
    pressed = _sweep(at, url_path)
    if url_path in ("step", "attention", "sampling", "cost", "inside", "serving", "hood"):
        assert any(k.endswith("_next") for k in pressed), pressed  # the page could step


def test_a_model_without_a_chat_template_turns_chat_mode_off_and_says_why(monkeypatch):
    from streamlit.testing.v1 import AppTest

    from autoreg_ui import family_text

    folder = str(zoo.folder("gpt2"))
    monkeypatch.setenv("AUTOREG_ALLOWED_MODELS", folder)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state[keys.MODEL] = folder
    at.session_state[keys.CHAT_KEPT] = True  # left by a model that had a template, or by a link
    _ok(at.run(), "first run")
    at.switch_page(site_pages.file("step"))
    _ok(at.run(), "step")
    toggle = at.toggle(key=keys.CHAT_BOX)
    assert toggle.value is False and toggle.disabled and at.session_state[keys.CHAT_KEPT] is False
    assert toggle.help == family_text.chat_off(folder)
    assert at.session_state[keys.SESSION].chat is False
    assert any("GPT-2 architecture" in c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("family, oldest_key", [("mistral", True), ("llama", False)])
def test_the_where_it_looked_ask_follows_the_window_of_the_layer_shown(family, oldest_key, monkeypatch):
    """Past the window on a sliding model the first token gets weight 0, so the Ask is about the window's oldest key;
    before the window fills, and on a model that sees every position, it asks about the first token."""
    from autoreg_ui.lessons.attention import text as att_text

    at = _open(str(zoo.folder(family)), "attention", monkeypatch)
    at.session_state["att_section"] = att_text.WHERE_IT_LOOKED
    _ok(at.run(), "where it looked")
    next_key = [k for k in _buttons(at) if k.endswith("_next")][0]
    seen = []
    while (query := at.session_state[keys.SESSION].cache_len - 1) <= zoo.WINDOW:
        shown = " ".join(m.value for m in at.markdown)
        past = query >= zoo.WINDOW
        seen.append(past)
        assert ("very first token" not in shown) == (oldest_key and past), query
        assert (f"oldest key still inside, position {query - zoo.WINDOW + 1:,}," in shown) == (oldest_key and past)
        assert "the two layers" in shown and "a middle one" not in shown  # both zoo models have 2 layers
        _press(at, next_key, f"attention, query {query}")
    assert seen[0] is False and seen[-1] is True  # both sides of the window were read
