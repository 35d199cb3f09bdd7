"""One after-run step per script run: a Next token click writes the URL once and publishes to the class at most
once, a settings change with no step still rewrites the URL, and a fragment's own rerun (which does not run
``app.py``) ends with the same step while a whole run takes it once, after the page."""
import functools
from types import SimpleNamespace

import pytest
from conftest import ROOT
from streamlit.runtime.scriptrunner_utils.exceptions import RerunData, RerunException, StopException
from streamlit.testing.v1 import AppTest, local_script_runner

from autoreg_server import live_classes
from autoreg_ui import after_run, keys, site_pages
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import mode as class_mode
from autoreg_ui.lessons.attention import keys as attention_keys
from autoreg_ui.sharing import links


@pytest.fixture
def counted(monkeypatch) -> dict:
    """How often this test's runs call ``links.sync_url`` and ``class_live.publish``."""
    calls = {"sync_url": 0, "publish": 0}

    def counting(name: str, real):
        def count(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return count

    monkeypatch.setattr(links, "sync_url", counting("sync_url", links.sync_url))
    monkeypatch.setattr(class_live, "publish", counting("publish", class_live.publish))
    return calls


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def _step_page(tiny_folder) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[keys.MODEL] = tiny_folder
    at.switch_page(site_pages.file("step"))
    return _ok(at.run())


def _clicks_next(at: AppTest, counted: dict) -> None:
    counted.update(sync_url=0, publish=0)
    _ok(at.button(key="step_next").click().run())
    # publish runs right after the step (before the page draws) and again at the end of the run, which finds
    # nothing new to write: the class's text is written once per click (see the teacher's test)
    assert counted["sync_url"] == 1 and counted["publish"] <= 2, counted


def test_a_next_token_click_writes_the_url_once(class_app, tiny_folder, counted):
    at = _step_page(tiny_folder)
    for steps in ("1", "2"):
        _clicks_next(at, counted)
        assert at.query_params["steps"] == steps
    counted.update(sync_url=0, publish=0)
    _ok(at.slider(key="cfg_temperature").set_value(0.3).run())  # the settings alone: no step, the URL changes
    assert counted["sync_url"] == 1 and at.query_params["seg"] == "1" and at.query_params["steps"] == "2"
    _clicks_next(at, counted)
    assert at.query_params["seg"] == ["1", "3~t0.3"]


def test_a_teachers_click_reaches_the_class_with_one_publish(class_app, tiny_folder, counted):
    teacher = _step_page(tiny_folder)
    _ok(teacher.sidebar.button(key=keys.CLASS_START).click().run())
    _ok(teacher.run())
    code = teacher.session_state[keys.CLASS_CODE]
    teacher.switch_page(site_pages.file("step"))
    _ok(teacher.run())
    for steps in (1, 2):
        before = class_live.store().info(code).version
        _clicks_next(teacher, counted)
        assert counted["publish"] == 2  # at the step, and at the end of the run
        assert class_live.store().info(code).version == before + 1  # one write to the class per click
        assert len(live_classes.shared().text(code)[1].records) == steps  # what every follower draws
        assert class_live.store().info(code).recipe["steps"] == steps


@pytest.mark.parametrize("page, prefix", [(site_pages.file("step"), "step"),
                                          (site_pages.file("attention"), attention_keys.ATT_STEP)])
def test_a_click_that_reruns_its_fragment_alone_writes_the_url_once(class_app, tiny_folder, counted, monkeypatch,
                                                                     page, prefix):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[keys.MODEL] = tiny_folder
    at.switch_page(page)
    _ok(_ok(at.run()).button(key=f"{prefix}_next").click().run())
    # what the browser asks after a click inside a fragment: that fragment's rerun alone, without app.py (AppTest
    # always reruns the whole app, so the request is given the page's fragments, as Streamlit's server gives it)
    fragments = list(at._fragment_storage._fragments)
    assert fragments
    monkeypatch.setattr(local_script_runner, "RerunData",
                        functools.partial(local_script_runner.RerunData, fragment_id_queue=fragments))
    app_ran = []
    monkeypatch.setattr(class_mode, "heartbeat", lambda *args: app_ran.append(args))
    counted.update(sync_url=0, publish=0)
    _ok(at.button(key=f"{prefix}_next").click().run())
    assert not app_ran and len(at.session_state[keys.SESSION].records) == 2  # the fragment alone ran, and stepped
    assert counted == {"sync_url": 1, "publish": 2} and at.query_params["steps"] == "2"


def test_a_fragments_own_rerun_ends_with_the_after_run_step(monkeypatch):
    monkeypatch.setattr(after_run.st, "fragment", lambda body: body)
    done = []
    monkeypatch.setattr(after_run, "after_run", lambda: done.append("after"))

    @after_run.fragment
    def part() -> None:
        done.append("body")

    for fragment_ids, ends in ((["the step fragment"], True), ([], False), (None, False)):
        monkeypatch.setattr(after_run, "get_script_run_ctx", lambda ids=fragment_ids: SimpleNamespace(
            fragment_ids_this_run=ids))
        done.clear()
        part()
        assert done == (["body", "after"] if ends else ["body"])  # a whole run: app.py's run_page takes it


def test_a_page_that_stops_early_still_ends_with_the_after_run_step(monkeypatch):
    done = []
    monkeypatch.setattr(after_run, "after_run", lambda: done.append("after"))

    def page(error=None):
        def run():
            done.append("page")
            if error is not None:
                raise error
        return SimpleNamespace(run=run)

    after_run.run_page(page())
    assert done == ["page", "after"]
    done.clear()
    with pytest.raises(StopException):
        after_run.run_page(page(StopException()))
    assert done == ["page", "after"]
    done.clear()
    with pytest.raises(RerunException):  # another run (or another page) comes at once and writes the URL itself
        after_run.run_page(page(RerunException(RerunData())))
    assert done == ["page"]
