"""Every view of every page has its Notice / Try / Ask box, and every box belongs to a view that exists."""
import ast
import re
from pathlib import Path

from autoreg_ui import guide_text

PAGES = Path(__file__).resolve().parents[2] / "pages"


def _views() -> set[str]:
    """Tab labels of every open_section dict and every guide.header / guide.show title in the pages."""
    views: set[str] = set()
    for page in PAGES.glob("*.py"):
        source = page.read_text()
        views |= set(re.findall(r'guide\.(?:header|show)\("([^"]+)"\)', source))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("VIEWS", "SECTIONS"):
                views |= {k.value for k in node.value.keys}
    return views


def test_every_view_has_a_box_and_every_box_a_view():
    views = _views()
    assert len(views) >= 25
    assert views == set(guide_text.GUIDES)


def test_each_box_has_three_full_sentences():
    for view, parts in guide_text.GUIDES.items():
        assert len(parts) == 3 and all(len(p) > 40 and p[-1] in ".?!:" for p in parts), view
        assert parts[2].endswith("?"), view  # the Ask line asks
    md = guide_text.guide_markdown("History")
    assert md.count("**") == 6 and md.startswith(f"**{guide_text.NOTICE}:**")
