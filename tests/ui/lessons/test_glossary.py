"""The glossary lesson: the search keeps exactly the terms a word finds, and says how many."""
from autoreg_ui.glossary_text import GROUPS, Term, all_terms
from autoreg_ui.lessons.glossary import controller, text

SMALL = {"A": (Term("KV cache", "Keys and values kept.", "attention"), Term("Top-p", "Nucleus sampling.", "sampling")),
         "B": (Term("Perplexity", "exp of the mean loss.", "step"),)}


def test_an_empty_search_keeps_every_group_and_term():
    assert controller.find("", SMALL) == SMALL and controller.find("   ", SMALL) == SMALL
    assert sum(len(t) for t in controller.find("").values()) == len(all_terms())


def test_a_word_keeps_the_terms_whose_name_or_meaning_has_it_in_any_case():
    assert controller.find("CACHE", SMALL) == {"A": (SMALL["A"][0],)}
    assert controller.find("nucleus", SMALL) == {"A": (SMALL["A"][1],)}  # found in the meaning
    assert controller.find(" loss ", SMALL) == {"B": SMALL["B"]}  # spaces around it are ignored
    assert controller.find("zzz", SMALL) == {}


def test_on_the_real_glossary_kv_cache_is_found_and_its_group_kept():
    found = controller.find("kv cache")
    names = [t.name for terms in found.values() for t in terms]
    assert "KV cache" in names and set(found) <= set(GROUPS)
    assert all("kv cache" in (t.name + " " + t.meaning).lower() for terms in found.values() for t in terms)


def test_a_long_paste_is_cut_to_the_searched_length():
    assert controller.find("x" * 10_000, SMALL) == {}
    assert controller.find("cache" + " " * 200, SMALL) == {"A": (SMALL["A"][0],)}  # cut, then stripped


def test_the_count_sentence_on_each_side_of_none_and_one():
    assert text.found_sentence("zzz", 0, 120) == ("No term matches `zzz`. Try a shorter word, or clear the box to see "
                                                  "all 120 terms.")
    assert text.found_sentence("cache", 1, 120) == "1 of 120 term matches `cache`."
    assert text.found_sentence("cache", 7, 120) == "7 of 120 terms match `cache`."
    assert text.found_sentence("a`b", 2, 3) == "2 of 3 terms match `a'b`."  # a backtick cannot end the code span
