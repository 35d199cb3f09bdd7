"""The tricks lesson's sentences: each number and direction worded from the value it is given, both sides of
every boundary; and the controller's validity checks and summaries."""
from __future__ import annotations

import random

import pytest

from autoreg_core.experiments import constrained_decoding as grammar
from autoreg_core.experiments import speculative_math as spec_math
from autoreg_core.experiments.constrained_decoding import Constrained, MaskStep
from autoreg_core.experiments.speculative_decoding import Decoded, Round, Speculated
from autoreg_ui.lessons.tricks import controller, text


def test_best_k_sentence_on_both_sides_of_paying():
    pays = spec_math.best_k(0.9, 0.05)
    said = text.best_k_sentence("A", 0.9, 0.05, pays.k, pays.speedup, pays.pays, spec_math.MAX_K, pays.next_adds)
    adds = 0.9 ** (pays.k + 1)
    assert said == (f"**A**: with α = 0.90 and c = 0.05, the formula (verify counted as one decode step) predicts "
                    f"k = {pays.k} best ({pays.speedup:.2f}× plain decoding). Guess {pays.k + 1} would add "
                    f"α^{pays.k + 1} = {adds:.2f} tokens for 0.05 of a step, "
                    f"{adds / 0.05:.2f} tokens per step of its cost, no more than the {pays.speedup:.2f} tokens per "
                    f"step that k = {pays.k} already gives, so it would not raise the speed-up.")
    assert adds / 0.05 <= pays.speedup < 0.9 ** pays.k / 0.05  # the rule, on each side of the best k
    never = spec_math.best_k(0.1, 0.5)
    said = text.best_k_sentence("B", 0.1, 0.5, never.k, never.speedup, never.pays)
    assert said.startswith("**B**: with α = 0.10 and c = 0.50, the formula (verify counted as one decode step) finds "
                           "no draft length that pays: the best, k = 1, is predicted at 0.73×, below plain decoding's "
                           "1×.")
    assert "pays best" not in said  # a prediction, not a measurement (the table beside it measures v)


def test_best_k_sentence_when_the_best_is_exactly_plain_decodings_speed():
    """α = 0 and c = 0 (both sliders at 0), or α = 1 and c = 1: the best speed-up is 1.00×, not below it."""
    for alpha, c in [(0.0, 0.0), (1.0, 1.0)]:
        flat = spec_math.best_k(alpha, c)
        assert flat.speedup == 1.0 and not flat.pays
        said = text.best_k_sentence("E", alpha, c, flat.k, flat.speedup, flat.pays, spec_math.MAX_K, flat.next_adds)
        assert "is predicted at 1.00×, no better than plain decoding's 1×." in said and "below" not in said


def test_best_k_sentence_when_the_best_is_the_longest_draft_looked_at():
    free = spec_math.best_k(0.95, 0.0)
    said = text.best_k_sentence("C", 0.95, 0.0, free.k, free.speedup, free.pays, spec_math.MAX_K, free.next_adds)
    assert said.startswith(f"**C**: with α = 0.95 and c = 0.00, the formula (verify counted as one decode step) says "
                           f"a longer draft still pays at k = {spec_math.MAX_K}, the longest this chart looks at "
                           f"({free.speedup:.2f}× plain decoding predicted)")
    assert spec_math.next_guess_pays(0.95, spec_math.MAX_K, 0.0)
    inside = spec_math.best_k(0.9, 0.05)
    assert inside.k < spec_math.MAX_K and f"predicts k = {inside.k} best" in text.best_k_sentence(
        "D", 0.9, 0.05, inside.k, inside.speedup, inside.pays, spec_math.MAX_K, inside.next_adds)


def _rounds(kept_per_round: list[int], k: int) -> list[Round]:
    return [Round(list(range(k)), kept, 99, 1.0, 10.0) for kept in kept_per_round]


def _independent(alpha: float, k: int, n: int, seed: int) -> list[Round]:
    rng, kept = random.Random(seed), []
    for _ in range(n):
        a = 0
        while a < k and rng.random() < alpha:
            a += 1
        kept.append(a)
    return _rounds(kept, k)


def _bursty(k: int, n: int, seed: int) -> list[Round]:
    rng, kept = random.Random(seed), []
    for _ in range(n):
        alpha, a = (0.95 if rng.random() < 0.5 else 0.2), 0
        while a < k and rng.random() < alpha:
            a += 1
        kept.append(a)
    return _rounds(kept, k)


def _sentence(rounds: list[Round], k: int) -> str:
    plain = Decoded(tokens=list(range(10)), token_ms=[10.0] * 9)
    m = spec_math.read_run(plain, Speculated(draft="d", k=k, rounds=rounds))
    return text.rounds_sentence("p", "d", m.predicted_tokens, m.tokens_per_round, m.runs)


@pytest.mark.parametrize("alpha,k,seed", [(0.5, 4, 1), (0.8, 4, 2), (0.9, 8, 3), (0.3, 2, 4)])
def test_runs_sentence_does_not_print_for_independent_acceptance(alpha, k, seed):
    said = _sentence(_independent(alpha, k, 2000, seed), k)
    assert "kept guesses came in runs" not in said and "opposite of runs" not in said
    assert said.endswith("within three standard errors of each other, too close for this run to show that kept "
                         "guesses come in runs.")


@pytest.mark.parametrize("k,seed", [(2, 1), (4, 2), (8, 3)])
def test_runs_sentence_prints_for_bursty_acceptance(k, seed):
    said = _sentence(_bursty(k, 2000, seed), k)
    assert "Here kept guesses came in runs: a round's first guess was kept " in said
    assert said.endswith("more than three standard errors apart. The formula takes every tested guess as kept "
                         "with the same α, whatever came before.")


def test_runs_sentence_in_its_other_two_states():
    runs = spec_math.Runs(first_kept=900, first_tested=1000, later_kept=100, later_tested=900)
    said = text.rounds_sentence("p", "d", 2.0, 1.9, runs)
    assert said == ("“p”, d: 1.90 tokens per round measured, 2.00 predicted from the measured α. A guess right after "
                    "a kept one was kept less often than a round's first guess, 11% (100 of 900) against 90% (900 of "
                    "1000), more than three standard errors apart: the opposite of runs, and not what the formula "
                    "assumes either.")
    one_guess = _sentence(_rounds([1, 0, 1, 1], 1), 1)  # k = 1: no guess is ever tested after a kept one
    assert one_guess.endswith("No guess was tested right after a kept one, so this run cannot show whether kept "
                              "guesses come in runs.")


def test_measured_sentence_says_whether_the_verify_cost_explains_the_gap():
    closer = text.measured_sentence("p", "d", 3.0, 1.2, 1.5, 2.0)
    assert "A verify pass took on average 2.00 decode steps' time, more than the one the formula assumes" in closer
    assert closer.endswith("counting it predicts 1.50×, closer to the measurement.")
    farther = text.measured_sentence("p", "d", 1.2, 1.25, 1.4, 0.9)
    assert "no more than the one the formula assumes" in farther
    assert farther.endswith("no closer to the measurement.")


def test_prefix_sentence_says_what_the_store_did():
    fast = text.prefix_sentence(30, 3000.0, 200.0, True, 2**20, hits=29, misses=1, budget=2**26)
    assert fast == ("30 tabs: 3.00 s of prefills without the cache, 200 ms with it (1 prefill and 29 copies from the "
                    "store), 15.0× faster. The stored prefill holds 1.00 MiB; every tab's logits are bit for bit a "
                    "fresh prefill's (a hit's cache is a copy of the stored one).")
    assert "logits and cache are bit for bit" not in fast  # the demonstration compares the logits only
    two = text.prefix_sentence(2, 10.0, 6.0, True, 1024, hits=1, misses=1, budget=2**26)
    assert "(1 prefill and 1 copy from the store)" in two
    slow = text.prefix_sentence(2, 10.0, 12.0, False, 1024, hits=1, misses=1, budget=2**26)
    assert "no faster here" in slow and slow.endswith("some tab's logits differ from the first fresh prefill's: "
                                                      "either two fresh prefills disagree, or a copy does.")
    # the store refused the prompt (its prefill over the budget): every tab a miss, nothing held, no copies claimed
    refused = text.prefix_sentence(3, 30.0, 31.0, True, 0, hits=0, misses=3, budget=2**20)
    assert refused == ("3 tabs: 30 ms of prefills without the cache, 31 ms with it (3 prefills and 0 copies from "
                       "the store), no faster here. The store kept nothing: this prompt's prefill is larger than its "
                       "budget of 1.00 MiB; every tab's logits are bit for bit a fresh prefill's.")
    differ = text.prefix_sentence(3, 30.0, 31.0, False, 0, hits=0, misses=3, budget=2**20)
    assert differ.endswith("some tab's logits differ from the first fresh prefill's, though none came from the store.")


@pytest.mark.parametrize("budget_mb, stored", [(0.0001, False), (64, True)])
def test_the_prefix_demonstration_counts_its_stores_hits_and_misses(tiny, monkeypatch, budget_mb, stored):
    """A budget smaller than the prompt's prefill: the store refuses it, every tab prefills; a large one: one prefill,
    then copies."""
    from autoreg_server import settings
    from autoreg_ui import measuring

    monkeypatch.setenv("AUTOREG_PREFIX_CACHE_MB", str(budget_mb))
    settings.reset_for_tests()
    try:
        ids = controller.demo_prompt_ids(tiny, None)
        found = measuring.measure({}, "x", "prefix", (), controller.prefix_work(tiny, ids, 3, lambda f, t: None))
    finally:
        monkeypatch.delenv("AUTOREG_PREFIX_CACHE_MB")
        settings.reset_for_tests()
    d = found.result
    assert (d.hits, d.misses) == ((2, 1) if stored else (0, 3)) and (d.held > 0) == stored and d.identical
    said = text.prefix_sentence(d.tabs, d.plain_ms, d.cached_ms, d.identical, d.held, d.hits, d.misses, d.budget)
    assert ("(1 prefill and 2 copies from the store)" in said) == stored
    assert ("The store kept nothing" in said) == (not stored)


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


def test_best_k_question_answers_by_the_rule_on_its_numbers():
    """α = 0.7, c = 0.2: guess 4 adds 0.24 tokens for 0.2 of a step (more than it costs), yet the speed-up falls."""
    from autoreg_ui.lessons.tricks import questions

    checked = questions.spec_best(None)
    assert checked.right == 1  # k = 3: "k = 2 to 4"
    assert checked.answer == (
        "**k = 3**, 1.58× plain decoding. Guess 4 would add 0.7^4 = 0.24 tokens for 0.2 of a step, 1.20 tokens per "
        "step of its cost: more tokens than the steps it costs, yet below the 1.58 tokens per step that k = 3 already "
        "gives, so the speed-up falls to 1.54×. A guess pays while α^(k+1) ÷ c exceeds the speed-up already reached.")
    best = spec_math.best_k(questions.BEST_ALPHA, questions.BEST_C)
    assert best.curve[best.k] < best.speedup and best.next_adds > questions.BEST_C  # "falls", "more than it costs"


def test_prefix_bytes_answer_adds_up_to_what_the_store_holds(live):
    """The formula the answer shows, its logits at 4 bytes each included, is the store's own count of bytes."""
    from autoreg_core.runtime import prefix_cache
    from autoreg_ui.lessons.tricks import questions

    spec, ids = live.bundle.spec, list(live.session.prompt_ids)
    store = prefix_cache.PrefixCache(2**30)
    controller._cached_prefill(live.bundle, ids, store)
    held = 2 * spec.n_layers * spec.n_kv_heads * spec.head_dim * len(ids) * spec.cache_bytes_per_element \
        + spec.vocab * 4
    assert store.stats().bytes == held
    answer = questions.prefix_bytes(live).answer
    assert f"× {len(ids)} positions × {spec.cache_bytes_per_element:g} bytes, plus {spec.vocab:,} logits × 4 bytes" \
        in answer


def test_a_cheap_drafts_cost_is_not_printed_as_zero():
    """Prompt lookup costs a few thousandths of a step: two significant figures, not "c = 0.00"."""
    best = spec_math.best_k(0.17, 0.0043)
    said = text.best_k_sentence("L", 0.17, 0.0043, best.k, best.speedup, best.pays, spec_math.MAX_K, best.next_adds)
    assert "with α = 0.17 and c = 0.0043, the formula (verify counted as one decode step) predicts k = " in said
    assert "0.00 " not in said
    assert f"α^{best.k + 1} = {best.next_adds:.2g} tokens for 0.0043 of a step" in said


def test_the_method_says_what_is_timed_and_why_a_draft_is_short():
    said = text.SPEC_METHOD
    assert "prefill left out)" not in said
    assert ("with one exception: the early-exit draft runs its layers over the whole prompt inside round 1's "
            "drafting, so its own prefill is counted in its c and in the measured speed-up") in said
    assert "found a shorter match" not in said
    assert ("fewer than k where the match prompt lookup took, the earliest, lay too near the end of the context to "
            "give k tokens, or it found none, or near the end of the run") in said


def test_the_early_exit_drafts_first_round_runs_over_the_whole_prompt(tiny):
    """What the method says, against the code: a fresh early-exit draft's cache is empty, so its first proposal feeds
    the whole context; later ones feed only what was added."""
    from autoreg_core.engine.config import SamplingConfig
    from autoreg_core.experiments import speculative_decoding as speculative

    draft = speculative.early_exit(tiny, 1)
    context = list(tiny.tokenizer("The cat sat on the mat")["input_ids"])
    assert draft.cache.get_seq_length() == 0
    draft.propose(context, 2, SamplingConfig(temperature=0.0), None)
    assert draft.cache.get_seq_length() == len(context) + 1  # the prompt, then one guess fed after it


@pytest.mark.parametrize("context, k, guesses", [
    ([1, 2, 3, 4, 5, 6, 7, 8, 1, 2], 3, [3, 4, 5]),  # the earliest match has k tokens after it
    ([5, 1, 2, 1, 2], 3, [1, 2]),  # the earliest match of (1, 2) ends 2 tokens from the end: only 2
    ([5, 6, 7, 8], 3, []),  # no match at all: no guess
])
def test_prompt_lookup_drafts_fewer_than_k_only_near_the_end_of_the_context_or_with_no_match(context, k, guesses):
    from autoreg_core.engine.config import SamplingConfig
    from autoreg_core.experiments import speculative_decoding as speculative

    assert speculative.PromptLookup(2).propose(context, k, SamplingConfig(temperature=0.0), None).tokens == guesses


def test_the_prefix_figure_names_what_the_store_did():
    from autoreg_ui.lessons.tricks import figures

    assert list(figures.prefix_figure(30, 3000.0, 200.0, 29, 1).data[0].x) == [
        "every tab prefills", "through the store: 1 prefill, 29 copies"]
    assert list(figures.prefix_figure(3, 30.0, 31.0, 0, 3).data[0].x)[1] == "through the store: 3 prefills, 0 copies"
    assert list(figures.prefix_figure(2, 30.0, 20.0, 1, 1).data[0].x)[1] == "through the store: 1 prefill, 1 copy"
