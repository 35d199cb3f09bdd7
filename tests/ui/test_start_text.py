"""The Start here paths: the right order, real durations, and every stop a link the app reads cleanly."""
from urllib.parse import parse_qsl, urlsplit

from autoreg_ui import link_codec
from autoreg_ui import start_text as text

TEACHING_ORDER = ["step", "sampling", "attention", "cost", "inside", "serving"]


def _order(path) -> list[str]:
    pages: list[str] = []
    for stop in path:
        if not pages or pages[-1] != stop.page:
            pages.append(stop.page)
    return pages


def test_two_paths_of_about_45_and_90_minutes():
    assert [text.path_minutes(p) for p in text.PATHS.values()] == [45, 90]


def test_paths_follow_the_teaching_order():
    assert _order(text.SHORT) == ["step", "sampling", "attention", "cost", "serving"]
    assert _order(text.LONG) == TEACHING_ORDER


def test_every_stop_is_a_link_the_app_reads_without_a_complaint():
    for path in text.PATHS.values():
        for stop in path:
            parts = urlsplit(stop.link)
            assert parts.path == f"/{stop.page}"
            query = dict(parse_qsl(parts.query))
            link, notes = link_codec.read(query)
            assert notes == [], (stop.title, notes)
            assert (link is not None) == ("prompt" in query), stop.title


def test_a_stop_is_one_markdown_line_with_its_link():
    stop = text.SHORT[0]
    assert text.stop_markdown(1, stop, text.SHORT) == f"1. **[{stop.title}]({stop.link})** · 10 min — {stop.do}"
    assert text.stop_markdown(1, stop, text.LONG) == f"1. **[{stop.title}]({stop.link})** · 15 min — {stop.do}"
    assert stop.link == "/step?prompt=The+capital+of+France+is&cfg_temperature=0&steps=3"
