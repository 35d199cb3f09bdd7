"""Every view of every page has its Notice / Try / Ask box, and every box belongs to a view that exists.

The boxes live with their lessons (each lesson's ``text.GUIDES``, class mode's in ``classroom.text``); this
gathers them all so a box for a renamed view, or a view without a box, still fails here.
"""
import ast
import importlib
from pathlib import Path

import pytest

from autoreg_ui import guide, site_pages
from autoreg_ui.classroom import text as class_mode_text
from autoreg_ui.lessons.serving import text as serving_text

ROOT = Path(__file__).resolve().parents[2]
LESSONS = tuple(sorted(p.name for p in (ROOT / "autoreg_ui" / "lessons").iterdir() if (p / "text.py").exists()))
OWNERS = {lesson: importlib.import_module(f"autoreg_ui.lessons.{lesson}.text") for lesson in LESSONS}
OWNERS["classroom"] = class_mode_text


def _all_guides() -> dict[str, tuple[str, str, str]]:
    every: dict[str, tuple[str, str, str]] = {}
    for owner, module in OWNERS.items():
        for view, parts in module.GUIDES.items():
            assert view not in every, (owner, view)  # one view, one box, in one lesson
            every[view] = parts
    return every


GUIDES = _all_guides()


def _page_source(page: site_pages.SitePage) -> str:
    """What draws a page: its entry file and, for a lesson, the lesson's page module."""
    files = [ROOT / page.file] + ([ROOT / "autoreg_ui" / "lessons" / page.lesson / "page.py"] if page.lesson else [])
    return "\n".join(f.read_text() for f in files if f.exists())


def _page_views() -> dict[str, set[str]]:
    """Per page, the views it shows a box for: the tab labels of every VIEWS / SECTIONS dict (open_section), every
    guide.header / guide.show title written as a string, and the page name a lesson_page.set_up(guides=...) shows."""
    found: dict[str, set[str]] = {}
    for page in site_pages.SITE_PAGES:
        views = found.setdefault(page.url_path, set())
        for node in ast.walk(ast.parse(_page_source(page))):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("VIEWS", "SECTIONS"):
                views |= {k.value for k in node.value.keys}
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner, name = getattr(node.func.value, "id", ""), node.func.attr
            if (owner, name) in (("guide", "header"), ("guide", "show")) and len(node.args) >= 2:
                if isinstance(node.args[1], ast.Constant):
                    views.add(node.args[1].value)
            if (owner, name) == ("lesson_page", "set_up") and any(k.arg == "guides" for k in node.keywords):
                views.add(node.args[1].value)
    return found


def _views() -> set[str]:
    return set().union(*_page_views().values())


def test_every_view_has_a_box_and_every_box_a_view():
    views = _views()
    assert len(views) >= 27
    assert views <= set(GUIDES), views - set(GUIDES)
    # the serving page's live panel and the Class page's panels show their boxes by their headings' constants,
    # which this scan of the pages cannot read
    by_constant = {serving_text.LIVE_TITLE, class_mode_text.QUESTION_HEADER, class_mode_text.SAMPLE_HEADER}
    assert set(GUIDES) - views <= by_constant and by_constant <= set(GUIDES)
    assert serving_text.LIVE_TITLE in serving_text.GUIDES


def test_each_page_shows_only_its_own_lessons_boxes():
    """A page passes its own lesson's GUIDES: every view a page names is a box of the lesson it imports."""
    for page, views in _page_views().items():
        source = _page_source(site_pages.BY_URL_PATH[page])
        lessons = {lesson for lesson in LESSONS if f"autoreg_ui.lessons.{lesson} import" in source}
        if not views:
            continue
        assert len(lessons) == 1, (page, lessons)
        (lesson,) = lessons
        assert views <= set(OWNERS[lesson].GUIDES), (page, views - set(OWNERS[lesson].GUIDES))


def test_each_box_has_three_full_sentences():
    for view, parts in GUIDES.items():
        assert len(parts) == 3 and all(len(p) > 40 and p[-1] in ".?!:" for p in parts), view
        assert parts[2].endswith("?"), view  # the Ask line asks
    md = guide.guide_markdown(GUIDES, "History")
    assert md.count("**") == 6 and md.startswith(f"**{guide.NOTICE}:**")


def test_a_measured_notice_takes_the_place_of_the_stored_one():
    view = "3 · Is a decode step memory-bound?"
    stored = guide.guide_markdown(GUIDES, view)
    measured = guide.guide_markdown(GUIDES, view, "Measured: 0.5 FLOP/byte.")
    assert stored.startswith(f"**{guide.NOTICE}:** {GUIDES[view][0]}\n\n")
    assert measured.startswith(f"**{guide.NOTICE}:** Measured: 0.5 FLOP/byte.\n\n")
    assert stored.split("\n\n")[1:] == measured.split("\n\n")[1:]  # Try and Ask stay


def test_no_box_states_an_outcome_before_it_is_measured():
    said = " ".join(" ".join(parts) for parts in GUIDES.values())
    for claim in ("barely moves", "differ much less", "nearly free", "far below the ridge", "costs nearly the same",
                  "plus one step", "almost for free", "match the model's own"):
        assert claim not in said, claim
    assert "memory-bound" not in " ".join(v for v in GUIDES if v.startswith("3 · Why"))


def test_the_live_panel_box_says_what_the_brief_asks():
    notice, try_this, ask = GUIDES[serving_text.LIVE_TITLE]
    assert "rows" in notice and "several tabs" in try_this and "Next token at the same moment" in try_this
    assert "8 rows" in ask


def test_a_view_without_a_box_shows_nothing_and_a_view_with_one_shows_it(monkeypatch):
    drawn = []

    class Box:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(guide.st, "expander",
                        lambda title, icon, expanded: drawn.append(("box", title, expanded)) and None or Box())
    monkeypatch.setattr(guide.presenter, "active", lambda: False)
    monkeypatch.setattr(guide.st, "markdown", lambda body: drawn.append(("md", body)))
    guide.show(serving_text.GUIDES, "no such view")
    assert drawn == []
    guide.show(serving_text.GUIDES, serving_text.LIVE_TITLE)
    assert drawn == [("box", guide.TITLE, True),  # open: the prompts are read before the first click
                     ("md", guide.guide_markdown(serving_text.GUIDES, serving_text.LIVE_TITLE))]
    with pytest.raises(KeyError):
        guide.guide_markdown(serving_text.GUIDES, "History")  # the step lesson's box is not the serving lesson's
