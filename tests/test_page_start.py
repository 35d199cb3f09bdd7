"""The Start here page under AppTest: both paths drawn with their links; the step page stays the default."""
from autoreg_ui.lessons.start import text


def test_start_page_shows_both_paths_with_every_link(open_page):
    at = open_page("pages/0_start.py")
    assert at.title[0].value == text.TITLE
    shown = "\n".join(m.value for m in at.markdown)
    for path in text.PATHS.values():
        for stop in path:
            assert f"]({stop.link})" in shown
    assert [s.value for s in at.subheader] == [f"{name} ({text.path_minutes(p)} min)" for name, p in text.PATHS.items()]


def test_an_answer_opens_only_after_a_choice_and_says_whether_it_was_right(open_page):
    at = open_page("pages/0_start.py")
    assert not at.success and not at.warning
    at.radio(key="start_quiz_accept").set_value("0.5").run()
    assert [s.value[:6] for s in at.success] == ["Right."] and "min(1, p / q) = **0.5**" in at.success[0].value
    at.radio(key="start_quiz_cache").set_value("true").run()
    assert [w.value.split(" ")[:2] for w in at.warning] == [["Not", "quite."]]
    assert "**500,500**" in at.warning[0].value


def test_start_page_has_its_terms_popover_with_links_to_the_glossary(open_page):
    from autoreg_ui import glossary_text

    at = open_page("pages/0_start.py")
    shown = [m.value for m in at.markdown]
    assert glossary_text.terms_markdown("start") in shown
    assert "[**Speculative decoding**](/glossary#speculative-decoding)" in glossary_text.terms_markdown("start")
