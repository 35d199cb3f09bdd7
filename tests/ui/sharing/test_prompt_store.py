"""The long-prompt store is bounded by bytes per tab and in total, so no tab can push out another's links."""
import threading

from autoreg_ui.sharing.prompt_store import PromptStore


def test_the_same_text_gets_the_same_short_id():
    store = PromptStore()
    pid = store.keep("hello " * 500, "a")
    assert len(pid) == 12 and store.keep("hello " * 500, "b") == pid and store.get(pid) == "hello " * 500


def test_one_tab_flooding_the_store_cannot_evict_another_tabs_prompt():
    store = PromptStore(per_tab_bytes=10_000, total_bytes=50_000)
    mine = store.keep("m" * 3_000, "quiet tab")
    for i in range(500):  # far more prompts than would fit
        store.keep(f"{i:05d}" + "f" * 2_995, "flooding tab")
    assert store.get(mine) == "m" * 3_000
    assert store.bytes_held("flooding tab") <= 10_000
    assert store.bytes_held() <= 50_000


def test_a_tabs_own_oldest_prompts_go_first():
    store = PromptStore(per_tab_bytes=5_000, total_bytes=100_000)
    first = store.keep("a" * 2_000, "t")
    second = store.keep("b" * 2_000, "t")
    third = store.keep("c" * 2_000, "t")
    assert (store.get(first), store.get(second), store.get(third)) == (None, "b" * 2_000, "c" * 2_000)
    assert store.bytes_held("t") == 4_000


def test_the_total_bound_drops_the_oldest_across_tabs():
    store = PromptStore(per_tab_bytes=10_000, total_bytes=6_000)
    old = store.keep("o" * 3_000, "one")
    store.keep("p" * 3_000, "two")
    store.keep("q" * 3_000, "three")
    assert store.get(old) is None and store.bytes_held() == 6_000


def test_a_prompt_shared_by_two_tabs_stays_while_one_of_them_keeps_it():
    store = PromptStore(per_tab_bytes=4_000, total_bytes=100_000)
    shared = store.keep("s" * 3_000, "a")
    store.keep("s" * 3_000, "b")
    store.keep("x" * 3_000, "a")  # a's share is full: a lets go of the shared prompt
    assert store.get(shared) == "s" * 3_000  # b still keeps it
    assert store.bytes_held("a") == 3_000 and store.bytes_held("b") == 3_000


def test_many_threads_keep_the_bounds():
    store = PromptStore(per_tab_bytes=3_000, total_bytes=20_000)

    def work(tab: str) -> None:
        for i in range(200):
            store.keep(f"{tab}{i:04d}" + "z" * 1_000, tab)

    threads = [threading.Thread(target=work, args=(f"tab{n}",)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.bytes_held() <= 20_000
    assert all(store.bytes_held(f"tab{n}") <= 3_000 for n in range(8))
