"""The shared sidebar under AppTest: its widgets make the tab's SamplingConfig, and a change reaches it."""
from dataclasses import replace

from autoreg_ui import keys, settings


def test_the_sidebar_builds_the_tabs_config_from_its_widgets(open_page):
    at = open_page("pages/step.py")
    assert at.session_state[keys.CONFIG] == settings.SIDEBAR_DEFAULTS
    at.sidebar.slider(key=keys.CFG_TEMPERATURE).set_value(0.3).run()
    at.sidebar.number_input(key=keys.CFG_TOP_K).set_value(7).run()
    at.sidebar.text_area(key=keys.CFG_STOPS).set_value("END\\n").run()
    assert not at.exception
    assert at.session_state[keys.CONFIG] == replace(settings.SIDEBAR_DEFAULTS, temperature=0.3, top_k=7,
                                                    stop_sequences=("END\n",))


def test_the_model_line_names_the_loaded_model(open_page, tiny_folder):
    at = open_page("pages/step.py")
    assert at.sidebar.selectbox(key=keys.MODEL).value == tiny_folder
    assert [h.value for h in at.sidebar.header] == ["Model", "Sampling", "Teach with it", "Share and save"]
