"""The lesson stop a class is on: set by the teacher's key only, read by every tab, gone with the class."""
import pytest

from autoreg_server.class_store import ClassStore, NotTeacher


@pytest.fixture
def store(tmp_path):
    return ClassStore(str(tmp_path / "classes.sqlite3"))


def test_the_teacher_sets_the_stop_and_every_change_moves_the_version(store):
    code, key = store.create()
    assert store.stop(code) is None
    before = store.version(code)
    stop = {"number": 3, "total": 7, "title": "Tokens", "page": "tokens", "params": [["prompt", "Hi"]]}
    store.set_stop(code, key, stop)
    assert store.stop(code) == stop and store.version(code) == before + 1
    store.set_stop(code, key, {**stop, "number": 4})
    assert store.stop(code)["number"] == 4
    store.set_stop(code, key, None)  # off the path
    assert store.stop(code) is None and store.version(code) == before + 3
    with pytest.raises(NotTeacher):
        store.set_stop(code, "not-the-key", stop)
    assert store.stop(code) is None


def test_a_stop_goes_with_its_class(store):
    code, key = store.create()
    other, other_key = store.create()
    store.set_stop(code, key, {"number": 1})
    store.set_stop(other, other_key, {"number": 2})
    store.end(code, key)
    assert store.stop(code) is None and store.stop(other) == {"number": 2}
