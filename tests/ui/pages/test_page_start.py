"""The Start here page under AppTest: both paths drawn with their links; the step page stays the default."""
from autoreg_ui.lessons.start import text


def test_start_page_shows_both_paths_with_every_link(open_page):
    at = open_page("pages/start.py")
    assert at.title[0].value == text.TITLE
    shown = "\n".join(m.value for m in at.markdown)
    for path in text.PATHS.values():
        for stop in path:
            assert f"]({stop.link})" in shown
    assert [s.value for s in at.subheader] == [text.TRY_TITLE, text.TEACH_TITLE, "A 45-minute lesson",
                                               "A 90-minute lesson", "A 50-minute lesson"]  # the third, advanced
    labels = [b.label for b in at.button]
    assert labels.count(text.TEACH_PATH) == 3
    assert all(f"**{stop.title}**" in labels for path in text.PATHS.values() for stop in path)


def test_teach_this_path_follows_it_in_this_tab(open_page):
    from autoreg_ui import keys, lesson_path
    from autoreg_ui.lessons.start import keys as start_keys

    at = open_page("pages/start.py")
    at.button(key=f"{start_keys.PATH_BEGIN}0").click().run()
    assert not at.exception
    path, index = lesson_path.current(at.session_state)
    assert index == 0 and [s.title for s in path.stops] == [s.title for s in text.SHORT]
    shown = [m.value for m in at.markdown]
    assert "**A 45-minute lesson** · stop 1 of 7: **Opening: what the class will see** (3 min)" in shown
    assert text.SHORT[0].do in shown  # the stop's own note, on top of its page
    assert at.button(key=keys.PATH_PREVIOUS).disabled and not at.button(key=keys.PATH_NEXT).disabled
    at.button(key=keys.PATH_NEXT).click().run()  # to the loop, in this session
    assert not at.exception
    assert lesson_path.current(at.session_state)[1] == 1 and lesson_path.GO not in at.session_state
    assert at.session_state[keys.CFG_TEMPERATURE] == 0.0  # the stop's setting, set on its widget
    assert text.SHORT[1].do in [m.value for m in at.markdown]
    assert at.title[0].value == "Step through generation"
    assert at.session_state[keys.SESSION].prompt == "The capital of France is"
    assert len(at.session_state[keys.SESSION].records) == 0  # stop 1 opens with no step taken


def test_an_answer_opens_only_after_a_choice_and_says_whether_it_was_right(open_page):
    at = open_page("pages/start.py")
    assert not at.success and not at.warning
    at.radio(key="start_quiz_top_p").set_value("2").run()
    assert [s.value[:6] for s in at.success] == ["Right."] and "keeps **2** tokens" in at.success[0].value
    at.radio(key="start_quiz_cache").set_value("true").run()
    assert [w.value.split(" ")[:2] for w in at.warning] == [["Not", "quite."]]
    assert "**500,500**" in at.warning[0].value


def test_start_page_has_its_terms_popover_with_links_to_the_glossary(open_page):
    from autoreg_ui import glossary_text

    at = open_page("pages/start.py")
    shown = [m.value for m in at.markdown]
    assert glossary_text.terms_markdown("start") in shown
    assert "[**Speculative decoding**](/glossary#speculative-decoding)" in glossary_text.terms_markdown("start")


def test_try_it_now_starts_the_typed_prompt_and_steps_once(open_page):
    from autoreg_ui import keys
    from autoreg_ui.lessons.start import keys as start_keys

    at = open_page("pages/start.py")
    assert text.TRY_WAITING in [c.value for c in at.caption]  # before a step: what the button will do
    at.text_input(key=start_keys.TRY_PROMPT).set_value("Once upon a time").run()
    at.button(key=start_keys.TRY_NEXT).click().run()
    assert not at.exception
    session = at.session_state[keys.SESSION]
    assert (session.prompt, len(session.records)) == ("Once upon a time", 1)
    assert at.session_state[keys.PROMPT_KEPT] == "Once upon a time"  # the step page continues this text
    assert any('class="tokstrip"' in m.value for m in at.markdown)
    at.button(key=start_keys.TRY_NEXT).click().run()  # the same prompt: the same text grows
    assert at.session_state[keys.SESSION] is session and len(session.records) == 2
