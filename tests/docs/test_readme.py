"""The README is the front door: short, its page list the registry's, and its Python API snippet runs as written."""
from __future__ import annotations

import re

import pytest

from autoreg_ui.site_pages import SITE_PAGES

from .markdown_refs import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_LINES = 200  # about 150: a front door, the rest in docs/


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.MULTILINE | re.DOTALL)
    assert match, f"the README has no section '{title}'"
    return match.group(1)


def pages_listed(section: str) -> list[tuple[str, str]]:
    """(title, url path) of each page bullet: ``- **Title** (`/path`) — …``."""
    return re.findall(r"^- \*\*(.+?)\*\* \(`/([\w-]+)`\)", section, re.MULTILINE)


def test_the_readme_stays_a_front_door():
    assert len(README.splitlines()) <= MAX_LINES


def test_the_two_commands_are_as_they_always_were():
    block = _section("Two commands")
    assert "make run    # creates .venv if missing, installs requirements + the model package, starts the app" in block
    assert "make test   # same setup, then every test" in block


def test_the_readme_lists_every_page_of_the_registry_once_in_its_order():
    assert pages_listed(_section("Pages")) == [(page.title, page.url_path) for page in SITE_PAGES]


def test_the_page_list_check_catches_a_missing_and_a_made_up_page():
    listed = pages_listed("- **Start here** (`/start`) — a.\n- **Made up** (`/madeup`) — b.\n")
    assert listed == [("Start here", "start"), ("Made up", "madeup")]
    assert listed != [(page.title, page.url_path) for page in SITE_PAGES]


@pytest.mark.integration
def test_the_python_api_snippet_runs_as_written():
    code = re.search(r"^## The Python API.*?^```python\n(.*?)^```", README, re.MULTILINE | re.DOTALL).group(1)
    assert "load_model()" in code and "Session(" in code and "SamplingConfig(" in code
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own README's snippet
    session, first = namespace["s"], namespace["rec"]
    assert session.text.startswith("The cat sat on the")
    assert session.records[0].token_id == first.token_id
    assert 2 <= len(session.records) <= 12  # the first step, up to 10 generated (the forced one undone)
    captured = session.step(namespace["cfg"], capture_attention=True).attention
    config = namespace["bundle"].model.config
    assert tuple(captured.shape) == (config.num_hidden_layers, config.num_attention_heads, len(session.ids))
