"""The README and docs/ point only at what exists: links and anchors, settings, commands, make targets and paths
into the tree. Each check also runs once on a made-up broken case, so a check that stopped looking fails."""
from __future__ import annotations

import dataclasses

import pytest

from autoreg_server.settings import Settings

from .markdown_refs import (
    DOCS,
    ROOT,
    broken_links,
    help_fails,
    make_targets_named,
    makefile_targets,
    missing_paths,
    module_exists,
    modules_named,
    modules_run,
    named_settings,
    tree_paths,
    unknown_settings,
)

SETTINGS = {f.metadata["variable"] for f in dataclasses.fields(Settings)}
# modules whose --help would start heavy work: checked as importable only, and why
IMPORT_ONLY = {
    "autoreg_ui.serve": "it loads the model and rebuilds the open classes before Streamlit reads its arguments",
}


def _text(page) -> str:
    return page.read_text(encoding="utf-8")


def test_the_docs_are_there():
    names = {page.name for page in DOCS}
    assert {"README.md", "pages.md", "teachers.md", "class-security.md", "operators.md", "settings.md", "deploying.md",
            "architecture.md", "measurements.md", "decisions.md"} <= names


# ---------------------------------------------------------------- links and anchors
def test_every_relative_link_and_anchor_resolves():
    assert [bad for page in DOCS for bad in broken_links(page, _text(page))] == []


def test_the_link_check_catches_a_missing_file_a_missing_anchor_and_a_missing_own_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A section\n")
    page = tmp_path / "page.md"
    text = ("# Page\n\n## Here it is\n\n[ok](other.md#a-section) [ok](#here-it-is) [ok](https://example.com/x)\n"
            "[gone](nowhere.md) ![gone](img/nothing.png) [bad](other.md#no-section) [bad](#not-here)\n"
            "```\n[in code](not-checked.md)\n```\n")
    assert broken_links(page, text) == [
        "page.md: nowhere.md (no such file)", "page.md: img/nothing.png (no such file)",
        "page.md: other.md#no-section (no heading #no-section)", "page.md: #not-here (no heading #not-here)"]


# ---------------------------------------------------------------- settings
def test_every_autoreg_name_in_the_docs_is_a_setting_or_a_documented_other_name():
    named = set().union(*(named_settings(_text(page)) for page in DOCS))
    assert unknown_settings(named, SETTINGS) == []


def test_every_setting_is_documented():
    named = set().union(*(named_settings(_text(page)) for page in DOCS))
    assert sorted(SETTINGS - named) == []


def test_the_settings_checks_catch_a_made_up_name_and_an_undocumented_setting():
    named = named_settings("Set `AUTOREG_MAX_SESSIONS` and `AUTOREG_NO_SUCH_THING`; the cookie `AUTOREG_REPLICA`.")
    assert named == {"AUTOREG_MAX_SESSIONS", "AUTOREG_NO_SUCH_THING", "AUTOREG_REPLICA"}
    assert unknown_settings(named, SETTINGS) == ["AUTOREG_NO_SUCH_THING"]
    assert sorted((SETTINGS | {"AUTOREG_NEW_ONE"}) - (SETTINGS | named) ) == ["AUTOREG_NEW_ONE"]


# ---------------------------------------------------------------- commands
def _run_modules() -> list[str]:
    return sorted(set().union(*(modules_run(_text(page)) for page in DOCS)))


def test_the_docs_run_the_project_modules():
    run = _run_modules()
    assert {"bench", "deploy.check", "autoreg_server.settings", "autoreg_server.class_store"} <= set(run)


@pytest.mark.parametrize("module", _run_modules())
def test_every_python_m_command_exists_and_answers_help(module):
    assert module_exists(module), f"python -m {module}: no such module"
    if module not in IMPORT_ONLY:
        assert help_fails(module) is None


def test_every_project_module_named_exists():
    named = set().union(*(modules_named(_text(page)) for page in DOCS))
    assert len(named) > 5
    assert sorted(m for m in named if not module_exists(m)) == []


def test_the_command_checks_catch_a_made_up_module():
    text = "Run `python -m bench.no_such_bench --fast` or\n```bash\npython -m deploy.check\n```\n"
    assert modules_run(text) == {"bench.no_such_bench", "deploy.check"}
    assert not module_exists("bench.no_such_bench")
    assert help_fails("bench.no_such_bench") is not None
    assert modules_named("see `bench.no_such_thing --x`") == {"bench.no_such_thing"}


def test_every_make_target_named_exists():
    named = set().union(*(make_targets_named(_text(page)) for page in DOCS))
    assert {"run", "test", "screenshots"} <= named
    assert sorted(named - makefile_targets()) == []


def test_the_make_check_catches_a_made_up_target():
    named = make_targets_named("Type `make test`, then `make no-such-target`; make sense of it.")
    assert named == {"test", "no-such-target"}
    assert sorted(named - makefile_targets()) == ["no-such-target"]


# ---------------------------------------------------------------- paths into the tree
def test_every_path_written_as_code_exists():
    paths = set().union(*(tree_paths(_text(page)) for page in DOCS))
    assert len(paths) > 20
    assert missing_paths(paths) == []


def test_the_path_check_catches_a_missing_file_and_a_missing_test():
    paths = tree_paths("`tests/test_architecture.py::test_no_such_rule`, `bench/no_such.py`, `bench/lib/goals.py`")
    assert missing_paths(paths, ROOT) == ["bench/no_such.py (no such file)",
                                          "tests/test_architecture.py::test_no_such_rule (no such test)"]


# ---------------------------------------------------------------- the pictures (made by make screenshots)
IMG = ROOT / "docs" / "img"
MAX_PICTURE_BYTES = 3 * 2**20


def test_every_page_of_the_registry_has_its_picture_and_every_picture_is_shown():
    from autoreg_ui.site_pages import SITE_PAGES

    pictures = {p.name for p in IMG.glob("*.png")}
    assert {f"page-{page.url_path}.png" for page in SITE_PAGES} <= pictures, "run: make screenshots"
    shown = "\n".join(_text(page) for page in DOCS)
    assert sorted(name for name in pictures if f"img/{name}" not in shown) == []


def test_the_pictures_stay_small():
    assert sum(p.stat().st_size for p in IMG.glob("*.png")) < MAX_PICTURE_BYTES
