"""The tricks lesson's sentences: each number and direction worded from the value it is given, both sides of
every boundary; and the controller's validity checks and summaries."""
from __future__ import annotations

from autoreg_core.experiments import constrained_decoding as grammar
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_core.experiments.constrained_decoding import Constrained, MaskStep
from autoreg_ui.lessons.tricks import controller, text


def test_best_k_sentence_on_both_sides_of_paying():
    pays = spec_math.best_k(0.9, 0.05)
    said = text.best_k_sentence("A", 0.9, 0.05, pays.k, pays.speedup, pays.pays)
    assert said == (f"**A**: with α = 0.90 and c = 0.05, k = {pays.k} pays best ({pays.speedup:.2f}× plain "
                    f"decoding); past k = {pays.k}, each extra guess costs more draft time than the tokens it adds.")
    never = spec_math.best_k(0.1, 0.5)
    said = text.best_k_sentence("B", 0.1, 0.5, never.k, never.speedup, never.pays)
    assert said.startswith("**B**: with α = 0.10 and c = 0.50, no draft length pays: the best, k = 1, gives a "
                           "speed-up of 0.73×, below plain decoding's 1×.")


def test_best_k_sentence_when_the_best_is_the_longest_draft_looked_at():
    free = spec_math.best_k(0.95, 0.0)
    said = text.best_k_sentence("C", 0.95, 0.0, free.k, free.speedup, free.pays, spec_math.MAX_K)
    assert said.startswith(f"**C**: with α = 0.95 and c = 0.00, a longer draft still pays at k = {spec_math.MAX_K}, "
                           "the longest this chart looks at")
    inside = spec_math.best_k(0.9, 0.05)
    assert inside.k < spec_math.MAX_K and "pays best" in text.best_k_sentence(
        "D", 0.9, 0.05, inside.k, inside.speedup, inside.pays, spec_math.MAX_K)


def test_rounds_sentence_both_ways():
    assert text.rounds_sentence("p", "d", 3.05, 4.0) == (
        "“p”, d: 4.00 tokens per round measured, 3.05 predicted from the measured α. More than predicted: kept "
        "guesses come in runs (after one kept guess the next is more likely kept), while the formula takes each "
        "guess as independent.")
    assert text.rounds_sentence("p", "d", 2.0, 1.9).endswith("No more than predicted: here the kept guesses do not "
                                                             "come in runs.")


def test_measured_sentence_says_whether_the_verify_cost_explains_the_gap():
    closer = text.measured_sentence("p", "d", 3.0, 1.2, 1.5, 2.0)
    assert "took 2.00 decode steps' time, more than the one the formula assumes" in closer
    assert closer.endswith("counting it predicts 1.50×, closer to the measurement.")
    farther = text.measured_sentence("p", "d", 1.2, 1.25, 1.4, 0.9)
    assert "no more than the one the formula assumes" in farther
    assert farther.endswith("no closer to the measurement.")


def test_prefix_sentence_both_ways():
    fast = text.prefix_sentence(30, 3000.0, 200.0, True, 2**20)
    assert fast.startswith("30 tabs: 3.00 s of prefills without the cache, 200 ms with it (one prefill and 29 "
                           "copies), 15.0× faster.")
    assert "1.00 MiB; every tab's logits and cache are bit for bit" in fast
    slow = text.prefix_sentence(2, 10.0, 12.0, False, 1024)
    assert "no faster on this short prompt" in slow and "some tab's logits differ" in slow


def test_prefix_stats_and_a_disabled_store():
    assert text.prefix_stats(3, 1, 120.0, 2**20) == ("3", "1", "120 ms", "1.00 MiB")
    assert text.prefix_budget(64 * 2**20, 1) == "Budget: 64.00 MiB (AUTOREG_PREFIX_CACHE_MB) · 1 prompt kept now."
    assert text.prefix_budget(64 * 2**20, 2).endswith("· 2 prompts kept now.")
    assert text.prefix_budget(0, 0) == f"Budget: {text.DISABLED}; nothing is kept."


def test_grammar_sentence_when_the_mask_removed_something_and_when_not():
    assert text.grammar_sentence(4, 12.5, 100, 0.42, 2) == (
        "Over 4 steps the grammar allowed on average 12 of the 100 tokens. It removed the most probability at "
        "step 2: 42.0% of what the model wanted there would have broken the grammar.")
    assert text.grammar_sentence(3, 5.0, 100, 0.0, 1).endswith("the model's own choices already fit the grammar.")
    assert text.validity("regex", True, "r") == "**Valid** under the regex: r."
    assert text.validity("regex", False, "r") == "**Not valid** under the regex: r."


def test_validity_checks_use_parsers_that_are_not_the_grammars():
    schema = controller.SCHEMA
    assert controller.check_valid(grammar.JSON_SCHEMA, schema, '{"name": "Ada", "age": 36}')[0]
    assert not controller.check_valid(grammar.JSON_SCHEMA, schema, '{"name": "Ada", "age": "36"}')[0]
    assert not controller.check_valid(grammar.JSON_SCHEMA, schema, '{"name": "Ada"')[0]
    assert controller.check_valid(grammar.REGEX, r"\d{3}-\d{4}", "555-0123")[0]
    assert not controller.check_valid(grammar.REGEX, r"\d{3}-\d{4}", "555-01234")[0]
    assert controller.check_valid(grammar.CHOICE, ["yes", "no"], "no")[0]
    assert not controller.check_valid(grammar.CHOICE, ["yes", "no"], "No")[0]
    assert controller.parse_source(grammar.CHOICE, " a \n\nb\n") == ["a", "b"]


def test_summary_finds_the_step_that_removed_most():
    run = Constrained("regex", [1], tokens=[5, 6, 7],
                      steps=[MaskStep(5, 10, 0.1, 5, True), MaskStep(6, 2, 0.7, 9, False),
                             MaskStep(7, 1, 0.0, 7, True)])
    assert controller.summary(run) == (3, 13 / 3, 0.7, 2)
    assert controller.summary(Constrained(None, [1])) == (0, 0.0, 0.0, 1)
