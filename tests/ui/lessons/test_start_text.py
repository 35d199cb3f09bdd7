"""The Start here paths: the right order, real durations, and every stop a link the app reads cleanly."""
from urllib.parse import parse_qsl, urlsplit

from autoreg_ui.lessons.start import text
from autoreg_ui.sharing import link_codec

TEACHING_ORDER = ["start", "step", "tokens", "sampling", "attention", "cost", "inside", "serving", "start"]


def _order(path) -> list[str]:
    pages: list[str] = []
    for stop in path:
        if not pages or pages[-1] != stop.page:
            pages.append(stop.page)
    return pages


def test_two_paths_of_about_45_and_90_minutes():
    assert [text.path_minutes(p) for p in text.PATHS.values()][:2] == [45, 90]
    assert list(text.PATHS)[:2] == ["A 45-minute lesson", "A 90-minute lesson"]


def test_an_advanced_path_after_the_two_lists_the_lessons_beyond_them():
    assert list(text.PATHS)[2:] == [text.ADVANCED_NAME] and text.PATHS_TITLE == "Three paths through the app"
    advanced = text.PATHS[text.ADVANCED_NAME]
    assert "hood" in [stop.page for stop in advanced] and text.path_minutes(advanced) == sum(
        stop.long_minutes for stop in advanced) > 0


def test_paths_follow_the_teaching_order():
    assert _order(text.SHORT) == ["start", "step", "tokens", "sampling", "attention", "cost", "start"]
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
    stop = text.SHORT[1]
    assert text.stop_markdown(2, stop, text.SHORT) == f"2. **[{stop.title}]({stop.link})** · 8 min — {stop.do}"
    assert text.stop_markdown(2, stop, text.LONG) == f"2. **[{stop.title}]({stop.link})** · 12 min — {stop.do}"
    assert stop.link == "/step?prompt=The+capital+of+France+is&cfg_temperature=0"  # no step taken: the class guesses


def test_each_path_opens_and_wraps_up_and_has_tokens_and_a_class():
    for path in text.PATHS.values():
        assert path[0].page == "start" and path[0].title.startswith("Opening")
        assert path[-1].page == "start" and path[-1].title.startswith("Wrap-up")
        assert "**Start a class**" in path[0].do
    for path in (text.SHORT, text.LONG):  # the first lessons read tokens; the advanced path builds on them
        assert any(stop.page == "tokens" for stop in path)
    assert [stop.page for stop in text.ADVANCED] == ["start", "hood", "tricks", "start"]
    attention = next(stop for stop in text.SHORT if stop.page == "attention")
    assert ("view", "causal-triangle") in attention.params


def test_a_path_title_is_its_computed_length_once():
    assert [text.path_title(p) for p in text.PATHS.values()] == ["A 45-minute lesson", "A 90-minute lesson",
                                                                 "A 50-minute lesson"]
    assert text.stop_line(3, text.SHORT[2], text.SHORT) == f"3. 5 min — {text.SHORT[2].do}"


def test_further_reading_names_the_three_papers_the_issue_asks_for():
    lines = text.FURTHER.split("\n")
    assert all(line.startswith("- ") for line in lines) and len(lines) == 5
    gpt2, speculative, paged = lines[0], lines[1], lines[2]
    assert gpt2.startswith("- Radford et al., 2019, *Language Models are Unsupervised Multitask Learners* (GPT-2)")
    assert speculative.startswith("- Leviathan, Kalman and Matias, 2023, *Fast Inference from Transformers via "
                                  "Speculative Decoding*")
    assert paged.startswith("- Kwon et al., 2023, *Efficient Memory Management for Large Language Model Serving "
                            "with PagedAttention* (vLLM)")


def test_the_opening_says_what_is_measured_and_what_is_cited():
    assert "nothing is precomputed" not in text.WHAT
    assert "computed or measured live on that computer, except a few published figures" in text.WHAT
    assert "on the computer that serves this page" in text.WHAT  # a student's own device runs nothing
    assert "which are cited with their sources" in text.WHAT
    serving = next(stop for stop in text.STOPS if stop.page == "serving")
    assert "barely moves" not in serving.do  # an outcome to measure, not to announce


def test_start_here_is_first_in_the_navigation():
    from autoreg_ui import site_pages

    first = site_pages.SITE_PAGES[0]
    assert (first.file, first.title, first.url_path, first.lesson) == ("pages/start.py", text.TITLE, "start", "start")
