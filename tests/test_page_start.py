"""The Start here page under AppTest: both paths drawn with their links; the step page stays the default."""
from autoreg_ui import start_text as text


def test_start_page_shows_both_paths_with_every_link(open_page):
    at = open_page("pages/0_start.py")
    assert at.title[0].value == text.TITLE
    shown = "\n".join(m.value for m in at.markdown)
    for path in text.PATHS.values():
        for stop in path:
            assert f"]({stop.link})" in shown
    assert [s.value for s in at.subheader] == [f"{name} ({text.path_minutes(p)} min)" for name, p in text.PATHS.items()]
