"""The links glue: ?layer=&head= and ?model= applied once to the state, a link read on load once, and
whole links through the app under AppTest (plain dicts as state where possible)."""
from dataclasses import replace

import pytest
from conftest import ROOT

from autoreg_ui import keys, messages, settings
from autoreg_ui.lessons.attention import keys as attention_keys
from autoreg_ui.lessons.attention import link_params as attention_links
from autoreg_ui.lessons.step import keys as step_keys
from autoreg_ui.sharing import link_codec, link_params, links
from autoreg_ui.sharing import text as sharing_text

N_LAYERS, N_HEADS = 30, 9
NOW = replace(settings.SIDEBAR_DEFAULTS, temperature=1.3, top_k=20, seed=7)  # the sidebar's current settings


def test_link_sets_layer_and_head_once_per_distinct_link():
    state = {}
    assert attention_links.apply({"layer": "3", "head": "mean"}, state, N_LAYERS, N_HEADS) == []
    assert (state[attention_keys.ATT_LAYER], state[attention_keys.ATT_HEAD]) == (3, -1)
    assert messages.take(state) == []
    state[attention_keys.ATT_LAYER] = 7  # the learner moves the slider; the URL still carries layer=3
    attention_links.apply({"layer": "3", "head": "mean"}, state, N_LAYERS, N_HEADS)
    assert state[attention_keys.ATT_LAYER] == 7
    attention_links.apply({"layer": "4", "head": "mean"}, state, N_LAYERS, N_HEADS)  # a new link applies
    assert state[attention_keys.ATT_LAYER] == 4


def test_only_layer_or_only_head():
    state = {attention_keys.ATT_LAYER: 5, attention_keys.ATT_HEAD: 2}
    attention_links.apply({"head": "4"}, state, N_LAYERS, N_HEADS)
    assert (state[attention_keys.ATT_LAYER], state[attention_keys.ATT_HEAD]) == (5, 4)
    attention_links.apply({"layer": "1"}, state, N_LAYERS, N_HEADS)
    assert (state[attention_keys.ATT_LAYER], state[attention_keys.ATT_HEAD]) == (1, 4)


def test_no_link_changes_nothing():
    state = {attention_keys.ATT_LAYER: 5}
    assert attention_links.apply({}, state, N_LAYERS, N_HEADS) == []
    assert state == {attention_keys.ATT_LAYER: 5}


def test_bad_link_keeps_widgets_and_says_why_once():
    state = {attention_keys.ATT_LAYER: 5, attention_keys.ATT_HEAD: 2}
    notes = attention_links.apply({"layer": "99", "head": "-1"}, state, N_LAYERS, N_HEADS)
    assert notes == ["The layer 99 in the link does not exist: this model has layers 0–29; it was ignored.",
                     "The head -1 in the link does not exist: this model has heads 0–8 or 'mean'; it was ignored."]
    assert (state[attention_keys.ATT_LAYER], state[attention_keys.ATT_HEAD]) == (5, 2)
    assert messages.take(state) == [("warning", notes[0]), ("warning", notes[1])]
    assert attention_links.apply({"layer": "99", "head": "-1"}, state, N_LAYERS, N_HEADS) == []  # said once
    assert messages.take(state) == []


def test_half_bad_link_applies_the_good_half():
    state = {}
    notes = attention_links.apply({"layer": "2", "head": "nine"}, state, N_LAYERS, N_HEADS)
    assert state[attention_keys.ATT_LAYER] == 2 and attention_keys.ATT_HEAD not in state
    assert notes == ["The head 'nine' in the link is not a whole number or 'mean'; it was ignored."]



def test_the_attention_lesson_declares_layer_and_head_through_the_page_registry():
    assert link_params.declared() == {"attention": attention_links.LINK_PARAMS}
    assert attention_links.LINK_PARAMS.names == ("layer", "head") and link_params.names() == {"layer", "head"}
    assert link_codec.is_known("layer") and link_codec.is_known("head") and not link_codec.is_known("heads")
    assert link_codec.check_others({"layer": ["3"], "head": ["mean"]}) == []  # kept in the URL, no message


ALLOWED = ["HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"]


def test_model_link_selects_an_allowed_model_once():
    state = {}
    assert links.apply_model({"model": ALLOWED[1]}, state, ALLOWED, ALLOWED[0]) is None
    assert state[keys.MODEL] == ALLOWED[1] and keys.MODEL_LINK_ERROR not in state
    state[keys.MODEL] = ALLOWED[0]  # the learner picks another model in the sidebar
    links.apply_model({"model": ALLOWED[1]}, state, ALLOWED, ALLOWED[0])
    assert state[keys.MODEL] == ALLOWED[0]


def test_unknown_model_link_keeps_the_default_and_says_so():
    state = {}
    note = links.apply_model({"model": "evil/<script>"}, state, ALLOWED, ALLOWED[0])
    assert note == ("Unknown model 'evil/?script?' in the link; using HuggingFaceTB/SmolLM2-135M-Instruct. "
                    "Available: HuggingFaceTB/SmolLM2-135M-Instruct, Qwen/Qwen2.5-0.5B-Instruct.")
    assert state[keys.MODEL_LINK_ERROR] == note and keys.MODEL not in state


def test_no_model_link():
    state = {}
    assert links.apply_model({}, state, ALLOWED, ALLOWED[0]) is None and state == {}


# ================================================================ the whole state in the URL


def test_read_on_load_applies_a_link_once_and_not_what_the_app_wrote_itself():
    state = {}
    query = {"prompt": "Hello", "steps": "2"}
    assert links.read_on_load(state, query) == []
    assert state[keys.LINK_PENDING] == ("link", link_codec.Link(prompt="Hello", steps=2))
    del state[keys.LINK_PENDING]
    assert links.read_on_load(state, query) == [] and keys.LINK_PENDING not in state  # the same link: once
    state[keys.LINK_SEEN] = links._own({"prompt": ["Hello"], "steps": ["3"]})  # what sync_url wrote after a step
    assert links.read_on_load(state, {"prompt": "Hello", "steps": "3"}) == [] and keys.LINK_PENDING not in state
    links.read_on_load(state, {"prompt": "Hello", "steps": "1"}, opened=True)  # the back button
    assert state[keys.LINK_PENDING] == ("link", link_codec.Link(prompt="Hello", steps=1))


def test_an_address_the_app_wrote_arriving_late_with_a_click_is_not_a_link():
    state = {keys.LINK_SEEN: links._own({"prompt": ["Hello"], "steps": ["3"]})}  # sync_url wrote steps=3
    late = {"prompt": "Hello", "steps": "2"}  # a click sent before steps=3 reached the browser
    assert links.read_on_load(state, late, opened=False) == []
    assert keys.LINK_PENDING not in state and state[keys.LINK_SEEN] == links._own({"prompt": ["Hello"],
                                                                                  "steps": ["3"]})
    links.read_on_load(state, late, opened=True)  # the same address from the back button: replayed
    assert state[keys.LINK_PENDING] == ("link", link_codec.Link(prompt="Hello", steps=2))


def test_which_runs_open_their_address():
    assert links.address_opened({}) is True  # the tab's first run: a pasted link, a reload, a new tab
    written = {keys.LINK_SEEN: ()}
    assert links.address_opened(written) is False  # outside a script run: no back button pressed
    links.expect_link(written)  # a lesson path opens a stop
    assert links.address_opened(written) is True and keys.LINK_EXPECTED not in written
    assert links.address_opened(written) is False  # once


def test_the_browsers_history_buttons_open_their_address(monkeypatch):
    class Ctx:
        is_history_navigation = True
    monkeypatch.setattr(links, "get_script_run_ctx", lambda: Ctx())
    assert links.address_opened({keys.LINK_SEEN: ()}) is True
    Ctx.is_history_navigation = False
    assert links.address_opened({keys.LINK_SEEN: ()}) is False


def test_a_teacher_tab_leading_its_class_replays_no_address():
    teacher = {keys.CLASS_CODE: "ABC", keys.CLASS_KEY: "k", keys.LINK_SEEN: ()}
    links.read_on_load(teacher, {"prompt": "Hello", "steps": "2"}, opened=True)  # not loaded yet: replayed
    assert teacher[keys.LINK_PENDING] == ("link", link_codec.Link(prompt="Hello", steps=2))
    leading = {**teacher, keys.CLASS_PUBLISHED: ({}, None)}
    del leading[keys.LINK_PENDING]
    links.read_on_load(leading, {"prompt": "Hello", "steps": "1"}, opened=True)  # the back button
    assert keys.LINK_PENDING not in leading
    assert leading[keys.MESSAGES] == [("info", sharing_text.CLASS_KEEPS_TEXT)]


def test_a_teacher_tab_leading_its_class_replays_the_lesson_path_stop_it_chose():
    leading = {keys.CLASS_CODE: "ABC", keys.CLASS_KEY: "k", keys.LINK_SEEN: (), keys.CLASS_PUBLISHED: ({}, None)}
    links.expect_link(leading)  # the teacher pressed a stop of the lesson path
    links.read_on_load(leading, {"prompt": "Once upon a time", "steps": "0"})
    assert leading[keys.LINK_PENDING] == ("link", link_codec.Link(prompt="Once upon a time", steps=0))
    assert keys.MESSAGES not in leading and keys.LINK_EXPECTED not in leading
    links.read_on_load(leading, {"prompt": "Once upon a time", "steps": "1"}, opened=True)  # then the back button
    assert leading[keys.MESSAGES] == [("info", sharing_text.CLASS_KEEPS_TEXT)]


def test_messages_about_the_rest_of_a_link_show_once():
    state = {}
    assert links.read_on_load(state, {"colour": "red"}) == ["The link has 1 part(s) this app does not know: "
                                                            "'colour'; ignored."]
    assert links.read_on_load(state, {"colour": "red"}) == []




# ---------------------------------------------------------------- the whole app, under AppTest
APP = str(ROOT / "app.py")


def _app(query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def test_a_link_written_by_the_app_rebuilds_the_same_session(embedded):
    at = _app({"cfg_temperature": "1.3", "cfg_top_k": "20", "cfg_seed": "7"})
    assert not at.exception and at.slider(key=keys.CFG_TEMPERATURE).value == 1.3
    at.button(key="step_next").click().run()
    at.session_state[step_keys.STEP_VIEW] = "Force the next token"  # the view with the force box
    at.run()
    at.text_input(key=step_keys.FORCE_TEXT).input(" banana").run()
    at.button(key=step_keys.FORCE_BUTTON).click().run()
    at.button(key="step_next").click().run()
    first = at.session_state[keys.SESSION]
    written = dict(at.query_params)
    assert written == {"cfg_temperature": "1.3", "cfg_top_k": "20", "cfg_seed": "7", "prompt": "The cat sat on the",
                       "steps": "3", "forced": f"2-{first.records[1].token_id}"}
    again = _app(written)
    assert not again.exception and not again.warning and not again.error
    assert [s.value for s in again.success] == ["Rebuilt from the link: the prompt and 3 steps, replayed exactly."]
    second = again.session_state[keys.SESSION]
    assert second.generated_ids == first.generated_ids and len(second.records) == 3
    assert [(r.prob, r.logprob, r.rank, r.forced) for r in second.records] == \
           [(r.prob, r.logprob, r.rank, r.forced) for r in first.records]
    assert dict(again.query_params) == written


def test_a_hostile_link_gives_messages_and_a_working_page(embedded):
    at = _app({"prompt": "<script>alert(1)</script>", "steps": "2", "forced": "1-99999999",
               "cfg_temperature": "NaN", "<img src=x onerror=alert(1)>": "1", "present": "yes please"})
    assert not at.exception
    assert at.title[0].value == "Step through generation"
    warned = " ".join(w.value for w in at.warning)
    assert "temperature 'NaN' is not a number" in warned and "part\\(s\\) this app does not know" in warned
    assert "presenter mode 'yes?please' is not 1 or 0" in warned
    assert [e.value.replace("\\", "") for e in at.error] == [
        "The token forced at step 1 (id 99999999) is not a token of this model (ids 0–49151). The link was not "
        "replayed."]
    assert all("<img" not in w.value and "<script" not in w.value for w in list(at.warning) + list(at.error))
    assert dict(at.query_params) == {}  # the URL keeps only what it means: here, the default session
    at.button(key="step_next").click().run()
    assert not at.exception and len(at.session_state[keys.SESSION].records) == 1


class _Bar:
    def __init__(self, fail: bool):
        self.fail = fail

    def progress(self, *args, **kwargs):
        if self.fail:
            raise KeyboardInterrupt("a rerun interrupts the replay")

    def empty(self):
        pass


class _Page:
    """Just what replay_pending draws: a progress bar and one alert."""

    def __init__(self, fail: bool = False):
        self.fail, self.alerts = fail, []

    def progress(self, *args, **kwargs):
        return _Bar(self.fail)

    def success(self, text):
        self.alerts.append(("success", text))

    def error(self, text):
        self.alerts.append(("error", text))

    def toast(self, text):
        self.alerts.append(("toast", text))


@pytest.mark.parametrize(("extra", "said"), [
    ({}, [("success", "Rebuilt from the link: the prompt and 2 steps, replayed exactly.")]),
    ({keys.PRESENT: True}, [("toast", "Rebuilt from the link: the prompt and 2 steps, replayed exactly.")]),
    ({keys.PATH: ("a path",)}, []),  # a lesson path's stop set itself up: no notice over its first screen
    ({keys.PATH: ("a path",), keys.PRESENT: True}, []),
])
def test_a_replayed_link_says_so_except_on_a_lesson_paths_stop(tiny, monkeypatch, extra, said):
    state = {keys.LINK_PENDING: ("link", link_codec.Link(prompt="Once upon a time", steps=2)),
             keys.CONFIG: replace(NOW, temperature=0.0), **extra}
    page = _Page()
    monkeypatch.setattr(links, "st", page)
    links.replay_pending(tiny, state)
    assert len(state[keys.SESSION].records) == 2 and page.alerts == said


def test_a_replay_interrupted_by_a_rerun_is_done_again_on_the_next_run(tiny, monkeypatch):
    link = link_codec.Link(prompt="Once upon a time", steps=3)
    state = {keys.LINK_PENDING: ("link", link), keys.CONFIG: replace(NOW, temperature=0.0)}
    monkeypatch.setattr(links, "st", _Page(fail=True))
    with pytest.raises(KeyboardInterrupt):
        links.replay_pending(tiny, state)
    assert state[keys.LINK_PENDING] == ("link", link) and keys.SESSION not in state
    page = _Page()
    monkeypatch.setattr(links, "st", page)
    links.replay_pending(tiny, state)
    assert keys.LINK_PENDING not in state and len(state[keys.SESSION].records) == 3
    kept = (state[keys.PROMPT_KEPT], state[keys.PROMPT_BOX], state[keys.CHAT_KEPT])
    assert kept == ("Once upon a time",) * 2 + (False,)
    assert page.alerts == [("success", "Rebuilt from the link: the prompt and 3 steps, replayed exactly.")]


def test_a_bad_replay_is_said_once_and_dropped(tiny, monkeypatch):
    state = {keys.LINK_PENDING: ("link", link_codec.Link(prompt_id="0123456789ab")), keys.CONFIG: NOW}
    page = _Page()
    monkeypatch.setattr(links, "st", page)
    links.replay_pending(tiny, state)
    assert keys.LINK_PENDING not in state and keys.SESSION not in state
    [(level, text)] = page.alerts
    assert level == "error" and "long prompt kept on the server that made it" in text


def test_a_view_link_opens_a_tab_by_its_name_once_and_a_wrong_name_says_which_exist():
    from autoreg_ui.sharing.link_codec import view_slug

    labels = ["1 · Where it looked", "4 · KV cache", "5 · Memory calculator"]
    assert [view_slug(label) for label in labels] == ["where-it-looked", "kv-cache", "memory-calculator"]
    assert view_slug("This step's distribution") == "this-step-s-distribution"
    state = {}
    assert links.apply_view({"view": "memory-calculator"}, state, labels, "att_section") is None
    assert state["att_section"] == "5 · Memory calculator"
    state["att_section"] = "1 · Where it looked"  # the learner moves on: the same link does not pull them back
    assert links.apply_view({"view": "memory-calculator"}, state, labels, "att_section") is None
    assert state["att_section"] == "1 · Where it looked"
    note = links.apply_view({"view": "nowhere"}, state, labels, "att_section")
    assert note.startswith("The link asks for the view 'nowhere', which this page does not have")
    assert note.endswith("where-it-looked, kv-cache, memory-calculator.")
    assert state["att_section"] == "1 · Where it looked"


def test_the_copy_buttons_words_come_from_the_text_module_as_javascript_strings():
    from autoreg_ui.sharing import links
    from autoreg_ui.sharing import text as sharing_text

    html = links.COPY_LINK_HTML
    assert 'done ? "Copied." : "Copy the address bar instead.";' in html
    assert (sharing_text.COPIED, sharing_text.COPY_FAILED) == ("Copied.", "Copy the address bar instead.")
    assert "COPIED" not in html and "COPY_FAILED" not in html  # every placeholder was filled
