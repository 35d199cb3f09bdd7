"""A teacher's change committed in this process calls the store's change hooks (the class feed reads at once)."""
from autoreg_server.class_store import ClassStore


def test_a_teachers_change_calls_the_hooks_after_it_is_committed_and_a_students_does_not(tmp_path):
    store = ClassStore(tmp_path / "classes.sqlite3")
    code, key = store.create()
    heard: list[tuple[str, int | None]] = []
    store.on_change(lambda changed: heard.append((changed, store.version(changed))))  # read from the store
    before = store.version(code)
    store.join(code)  # a student's action: no teacher change
    assert heard == []
    store.set_recipe(code, key, {"prompt": "x"})
    store.ask(code, key, 0)
    assert heard == [(code, before + 1), (code, before + 2)]  # each seen committed, in order
    try:
        store.set_recipe(code, "not-the-key", {"prompt": "y"})
    except ValueError:
        pass
    assert len(heard) == 2  # a refused change calls nothing


def test_a_change_here_voids_the_version_a_waiter_had_cached(tmp_path):
    """PostgreSQL keeps the last read version until NOTIFY arrives; a change made here must not wait for it."""
    store = ClassStore(tmp_path / "classes.sqlite3")
    code, key = store.create()
    other, _ = store.create()
    store._versions[code] = ("stamp", 0.0, 1, float("inf"))
    store._versions[other] = ("stamp", 0.0, 1, float("inf"))
    store.set_recipe(code, key, {"prompt": "x"})
    assert code not in store._versions and other in store._versions
