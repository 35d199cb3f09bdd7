"""Every view of every page has its Notice / Try / Ask box, and every box belongs to a view that exists."""
import ast
import re
from pathlib import Path

from autoreg_ui import guide_text
from autoreg_ui.classroom import text as class_mode_text
from autoreg_ui.lessons.serving import text as serving_text

PAGES = Path(__file__).resolve().parents[2] / "pages"


def _views() -> set[str]:
    """Tab labels of every open_section dict and every guide.header / guide.show title in the pages."""
    views: set[str] = set()
    for page in PAGES.glob("*.py"):
        source = page.read_text()
        views |= set(re.findall(r'guide\.(?:header|show)\("([^"]+)"[,)]', source))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("VIEWS", "SECTIONS"):
                views |= {k.value for k in node.value.keys}
    return views


def test_every_view_has_a_box_and_every_box_a_view():
    views = _views()
    assert len(views) >= 27
    assert views <= set(guide_text.GUIDES), views - set(guide_text.GUIDES)
    # the serving page's live panel and the Class page's panels show their boxes by their headings' constants,
    # which this scan of the pages cannot read
    by_constant = {guide_text.LIVE_PANEL, class_mode_text.QUESTION_HEADER, class_mode_text.SAMPLE_HEADER}
    assert set(guide_text.GUIDES) - views <= by_constant and by_constant <= set(guide_text.GUIDES)
    assert guide_text.LIVE_PANEL == serving_text.LIVE_TITLE


def test_each_box_has_three_full_sentences():
    for view, parts in guide_text.GUIDES.items():
        assert len(parts) == 3 and all(len(p) > 40 and p[-1] in ".?!:" for p in parts), view
        assert parts[2].endswith("?"), view  # the Ask line asks
    md = guide_text.guide_markdown("History")
    assert md.count("**") == 6 and md.startswith(f"**{guide_text.NOTICE}:**")


def test_a_measured_notice_takes_the_place_of_the_stored_one():
    view = "3 · Is a decode step memory-bound?"
    stored = guide_text.guide_markdown(view)
    measured = guide_text.guide_markdown(view, "Measured: 0.5 FLOP/byte.")
    assert stored.startswith(f"**{guide_text.NOTICE}:** {guide_text.GUIDES[view][0]}\n\n")
    assert measured.startswith(f"**{guide_text.NOTICE}:** Measured: 0.5 FLOP/byte.\n\n")
    assert stored.split("\n\n")[1:] == measured.split("\n\n")[1:]  # Try and Ask stay


def test_no_box_states_an_outcome_before_it_is_measured():
    said = " ".join(" ".join(parts) for parts in guide_text.GUIDES.values())
    for claim in ("barely moves", "differ much less", "nearly free", "far below the ridge", "costs nearly the same",
                  "plus one step", "almost for free", "match the model's own"):
        assert claim not in said, claim
    assert "memory-bound" not in " ".join(v for v in guide_text.GUIDES if v.startswith("3 · Why"))


def test_the_live_panel_box_says_what_the_brief_asks():
    notice, try_this, ask = guide_text.GUIDES[guide_text.LIVE_PANEL]
    assert "rows" in notice and "several tabs" in try_this and "Next token at the same moment" in try_this
    assert "8 rows" in ask
