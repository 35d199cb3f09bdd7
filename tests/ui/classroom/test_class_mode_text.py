"""Class mode's sentences that are computed: the settings line, scores, several-token guesses."""
from autoreg_ui.classroom import text


def test_the_settings_line_names_greedy_or_every_filter_that_is_on():
    assert (text.settings_text({"temperature": 0.0, "max_new_tokens": 32})
            == "greedy (temperature 0) · at most 32 new tokens")
    line = text.settings_text({"temperature": 0.7, "top_k": 40, "top_p": 0.9, "min_p": 0.0, "seed": 3,
                               "repetition_penalty": 1.2, "max_new_tokens": 64})
    assert line == ("temperature 0.7 · top-k 40 · top-p 0.9 · seed 3 · repetition penalty 1.2 · "
                    "at most 64 new tokens")


def test_a_score_says_when_a_guess_was_several_tokens():
    one = text.your_score("Paris", "·Paris", 0.5, 1, 90.0, 1)
    many = text.your_score("the city", "·the", 0.1, 3, 66.8, 2)
    assert "scored by its first" not in one and "(a guess of 2 tokens, scored by its first)" in many
    assert text.total_score(90.0, 1) == "Your total: 90.0 points over 1 revealed question."
    assert text.total_score(180.0, 2).endswith("2 revealed questions.")


def test_a_small_probability_never_reads_as_zero():
    assert text.pct(0.4153) == "41.5%" and text.pct(0.0261) == "2.6%"
    assert text.pct(0.0000123) == "0.0012%" and text.pct(0.0) == "0%"
    assert text.model_chose("·moon", 0.05, 2) == ("The model drew ·moon (model probability p = 5.0%, rank 2, both "
                                                  "before the repetition penalty, temperature and filters).")
    assert text.class_best("·Paris", 2, 3, 0.00001) == ("The class's most common guess: ·Paris (2 of 3); its model "
                                                       "probability 0.001%.")


def test_a_tiny_probability_is_said_as_under_the_smallest_percentage_not_in_e_notation():
    tiny = text.your_score("xyz", "·xyz", 2.5e-9, 26283, 1.0, 1)
    assert "the model gave it p < 0.001%, rank 26283," in tiny and "e-" not in tiny
    assert "the model gave it p = 0.0012%, rank 3," in text.your_score("a", "·a", 0.0000123, 3, 1.0, 1)
    assert text.model_chose("·moon", 9e-6, 900) == ("The model drew ·moon (model probability p < 0.001%, rank 900, "
                                                    "both before the repetition penalty, temperature and filters).")
    assert text.class_best("·x", 2, 3, 9e-6).endswith("its model probability < 0.001%.")
    assert text.record_question(1, 0, "·x", 9e-6, 7).endswith(
        "the model drew ·x (model probability p < 0.001%, rank 7, both before the repetition penalty, temperature and "
        "filters)")


def test_a_probability_near_one_never_reads_as_a_sure_thing():
    for prob, said in ((0.9994, "p = 99.9%"), (0.9995, "p > 99.9%"), (0.99999, "p > 99.9%"), (1.0, "p > 99.9%")):
        assert text.model_chose("·moon", prob, 1) == (f"The model drew ·moon (model probability {said}, rank 1, both "
                                                      "before the repetition penalty, temperature and filters).")
    assert text.pct(0.9996) == "> 99.9%" and text.class_best("·x", 2, 3, 0.9996).endswith("its model probability "
                                                                                         "> 99.9%.")


def test_the_score_rule_quotes_scores_computed_by_the_scoring_function():
    from autoreg_core.experiments.guess_score import POINTS_PER_BIT, points
    from autoreg_ui.glossary_text import term_named

    assert f"minus {POINTS_PER_BIT:.0f} per bit" in text.SCORE_RULE
    assert f"p = ½ scores {points(0.5):.0f}, p = 1/1024 scores {points(1 / 1024):.0f}." in text.SCORE_RULE
    assert term_named("Surprisal").meaning.endswith(f"minus {POINTS_PER_BIT:.0f} per bit.")


def test_a_tie_is_named_as_one_and_a_guess_is_quoted():
    assert text.class_tie(["·Paris", "·Rome", "·the"], 1, 3) == ("No single most common guess: ·Paris, ·Rome and "
                                                                 "·the tie (1 each of 3).")
    assert text.your_score("Paris", "·Paris", 0.5, 1, 90.0, 1).startswith("Your guess “Paris” was scored")
    assert text.GUESS_KEPT.format(text="Paris").startswith("Your guess “Paris” is in")


def test_a_limit_is_said_with_its_number():
    from autoreg_ui.classroom.student import too_long_message

    assert too_long_message("Ann", 24, text.NICK_TOO_LONG) is None
    said = too_long_message("A" * 10_000, 24, text.NICK_TOO_LONG)
    assert said == "A nickname is at most 24 characters; this one has 10,000. Shorten it and press Join again."
    assert "at most 40 characters" in too_long_message("x" * 41, 40, text.GUESS_TOO_LONG)


def test_a_rounds_settings_line_states_its_own_temperature_and_length_not_a_seed():
    line = text.settings_text({"temperature": 1.5, "top_k": 0, "seed": 3, "max_new_tokens": 64}, round_tokens=5)
    assert line == "temperature 1.5 · at most 5 tokens per student"
    assert text.settings_text({"temperature": 0.0, "max_new_tokens": 64}, round_tokens=1) == (
        "greedy (temperature 0) · at most 1 token per student")


def test_the_desk_shows_a_question_only_while_the_text_is_the_one_it_was_about():
    from types import SimpleNamespace

    from autoreg_ui.classroom.desk import round_temperature, shown_question

    open_q = SimpleNamespace(step=3, revealed=None)
    revealed = SimpleNamespace(step=3, revealed=1.0)
    assert shown_question(open_q, 3) is open_q and shown_question(open_q, 4) is None
    assert shown_question(open_q, 2) is None  # an undo
    assert shown_question(revealed, 4) is revealed and shown_question(revealed, 5) is None
    assert shown_question(revealed, 3) is None and shown_question(None, 3) is None
    assert round_temperature(SimpleNamespace(temperature=0.0)) == 1.0
    assert round_temperature(SimpleNamespace(temperature=0.7)) == 0.7


def test_a_draw_shows_as_escaped_chips_with_visible_newlines():
    from autoreg_ui.classroom.figures import token_chips_html

    chips = token_chips_html(["·Paris", "↵", "<b>"])
    assert chips.count("<span") == 3 and "&lt;b&gt;" in chips and "<b>" not in chips and "↵" in chips


def test_desk_sample_help_states_the_rounds_own_length_and_temperature():
    assert "draws up to 5 tokens" in text.desk_sample_help(5, 1.0) and "temperature 1 " in text.desk_sample_help(5, 1.0)
    assert "temperature 0.7 " in text.desk_sample_help(5, 0.7) and "greedy" not in text.desk_sample_help(5, 0.7)
    assert "temperature 1 (your settings are greedy" in text.desk_sample_help(5, 1.0, greedy=True)


def test_a_students_page_names_the_stop_the_class_is_on():
    from autoreg_ui import lesson_path
    from autoreg_ui.lessons.start import text as start_text

    path = lesson_path.Path(start_text.SHORT_NAME if hasattr(start_text, "SHORT_NAME") else "p", start_text.SHORT)
    stop = lesson_path.stop_for_class(path, 2)
    assert (stop["number"], stop["total"], stop["page"]) == (3, len(start_text.SHORT), start_text.SHORT[2].page)
    assert [tuple(p) for p in stop["params"]] == list(start_text.SHORT[2].params)
    assert text.CLASS_AT_STOP.format(number=3, total=7, title="Tokens") == "The class is at stop 3 of 7: **Tokens**."
