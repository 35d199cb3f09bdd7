"""autoreg_ui.state: the server's torch thread count, and widget values kept through runs that do not draw them."""
from autoreg_server.settings import Settings
from autoreg_ui import state


def threads(value: str) -> int:
    return Settings.from_environ({"AUTOREG_TORCH_THREADS": value}).torch_threads


def test_torch_threads_default_value_and_bad_values():
    assert Settings.from_environ({}).torch_threads == 1
    assert threads("4") == 4
    assert threads("0") == 1
    assert threads("all") == 1


def test_keep_widget_values_writes_back_only_the_named_keys_that_exist():
    class Recording(dict):
        def __init__(self, *args):
            super().__init__(*args)
            self.written = []

        def __setitem__(self, key, value):
            self.written.append(key)
            super().__setitem__(key, value)

    kept = Recording({"seq": 4096, "batch": 8, "other": 1})
    state.keep_widget_values(kept, ["seq", "batch", "missing"])  # a write (even of the same value) keeps it
    assert sorted(kept.written) == ["batch", "seq"]
    assert kept == {"seq": 4096, "batch": 8, "other": 1}


def test_forward_slots_default_to_cores_over_threads_and_read_the_operator():
    def slots(value: str | None) -> int | None:
        return Settings.from_environ({} if value is None else {"AUTOREG_FORWARD_SLOTS": value}).forward_slots

    assert state.forward_slots(1, slots(None), cores=2) == 2
    assert state.forward_slots(2, slots(None), cores=2) == 1 and state.forward_slots(4, slots(None), cores=2) == 1
    assert state.forward_slots(1, slots("3"), cores=2) == 3
    assert state.forward_slots(1, slots("0"), cores=2) == 0  # no limit
    assert state.forward_slots(1, slots("-1"), cores=8) == 8
    assert state.forward_slots(1, slots("many"), cores=8) == 8


def test_loaded_models_are_bounded_by_the_operator(monkeypatch):
    import streamlit as st

    made = []
    monkeypatch.setattr(st, "cache_resource", lambda **kw: made.append(kw) or (lambda f: f))
    state.bundle_cache.cache_clear()  # made on first use, with the settings of that moment
    try:
        monkeypatch.setattr(state, "load_shared", lambda name: f"loaded {name}")
        assert state.shared_bundle("m") == "loaded m" and made[-1]["max_entries"] == 2
        monkeypatch.setenv("AUTOREG_MAX_MODELS", "3")
        assert state.shared_bundle("m") == "loaded m" and made[-1]["max_entries"] == 3
    finally:
        monkeypatch.undo()
        state.bundle_cache.cache_clear()
    assert state.bundle_cache(2)._info.max_entries == 2



def test_the_session_runtime_is_the_batchers_pass_and_the_shared_prefix_cache_or_none(tiny, monkeypatch):
    from autoreg_core.runtime import batcher, prefix_cache

    store = prefix_cache.PrefixCache(2**20)
    monkeypatch.setattr(prefix_cache, "_SHARED", store)
    monkeypatch.setenv("AUTOREG_BATCH", "1")
    runtime = state.session_runtime(tiny)
    assert runtime == {"step_pass": batcher.batcher_for(tiny).decode, "prefill_cache": store}
    monkeypatch.setenv("AUTOREG_BATCH", "0")
    monkeypatch.setattr(prefix_cache, "_SHARED", prefix_cache.PrefixCache(0))
    assert state.session_runtime(tiny) == {"step_pass": None, "prefill_cache": None}
