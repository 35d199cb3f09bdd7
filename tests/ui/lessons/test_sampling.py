"""The sampling lab's controller without Streamlit running: settings by name, kept widgets, its sources."""
import pytest
import torch

from autoreg_core import SamplingConfig, Session, SessionError
from autoreg_core.experiments.beam_search import BeamSettings
from autoreg_core.experiments.continuations import sample_continuations
from autoreg_core.experiments.sampling_lab import temperature_sweep
from autoreg_ui import keys as site_keys
from autoreg_ui import measuring
from autoreg_ui import state as state_module
from autoreg_ui.lessons.sampling import controller as lab
from autoreg_ui.lessons.sampling import keys


def _state(**sidebar):
    state = {site_keys.CONFIG: SamplingConfig(**sidebar)}
    state_module.restore_widgets(state, lab.defaults(state[site_keys.CONFIG], "The cat sat on the", False))
    return state


def test_first_values_come_from_the_sidebar_and_the_kept_prompt():
    state = _state(temperature=0.7, top_k=20, seed=3)
    assert (state[keys.LAB_TEMPERATURE], state[keys.LAB_TOP_K], state[keys.LAB_SEED]) == (0.7, 20, 3)
    assert (state[keys.LAB_PROMPT], state[keys.LAB_CHAT]) == ("The cat sat on the", False)
    assert state[keys.LAB_SOURCE] == lab.SESSION_SOURCE


def test_widget_values_survive_a_page_change():
    state = _state()
    state[keys.LAB_TEMPERATURE], state[keys.LAB_BEAM_WIDTH] = 1.7, 5
    lab.remember(state)
    for key in lab.KEPT_WIDGETS:  # Streamlit forgets the widgets a page did not draw
        del state[key]
    state_module.restore_widgets(state, lab.defaults(SamplingConfig(temperature=0.2), "other", True))
    assert (state[keys.LAB_TEMPERATURE], state[keys.LAB_BEAM_WIDTH], state[keys.LAB_PROMPT]) == (
        1.7, 5, "The cat sat on the")


def test_settings_are_read_by_name():
    state = _state(repetition_penalty=1.3)
    state.update({keys.LAB_TEMPERATURE: 0.5, keys.LAB_TOP_K: 7, keys.LAB_TOP_P: 0.8, keys.LAB_MIN_P: 0.1,
                  keys.LAB_SEED: 9})
    assert lab.lab_config(state) == SamplingConfig(temperature=0.5, top_k=7, top_p=0.8, min_p=0.1,
                                                   repetition_penalty=1.3, seed=9)
    state.update({keys.LAB_BEAM_WIDTH: 4, keys.LAB_BEAM_STEPS: 10, keys.LAB_BEAM_LP: 0.5})
    assert lab.beam_settings(state) == BeamSettings(num_beams=4, max_new_tokens=10, length_penalty=0.5)
    state.update({keys.LAB_CONT_A: "greedy", keys.LAB_CONT_B: lab.LAB_SETTINGS, keys.LAB_CONT_K: 2,
                  keys.LAB_CONT_M: 6})
    assert lab.continuation_run(state) == lab.ContinuationRun("greedy", lab.LAB_SETTINGS, 2, 6, 9)
    state[keys.LAB_STRAT_TOP_K] = 3
    names = list(lab.presets(state))
    assert len(names) == 9 and "top-k 3" in names and names[-2:] == [lab.LAB_SETTINGS, lab.SIDEBAR_SETTINGS]
    assert lab.presets(state)[lab.SIDEBAR_SETTINGS] == state[site_keys.CONFIG]


def test_buttons_copy_the_sidebar_and_draw_again():
    state = _state(temperature=0.9, top_p=0.5, seed=4)
    state[keys.LAB_TEMPERATURE], state[keys.LAB_SEED] = 2.0, 1
    lab.copy_sidebar(state)
    assert (state[keys.LAB_TEMPERATURE], state[keys.LAB_TOP_P], state[keys.LAB_SEED]) == (0.9, 0.5, 4)
    assert state[keys.LAB_TEMPERATURE + site_keys.KEPT_SUFFIX] == 0.9
    assert lab.draw_seed(state) == 4
    lab.redraw(state)
    lab.redraw(state)
    assert lab.draw_seed(state) == 6


def test_a_choice_no_longer_offered_falls_back():
    state = {keys.LAB_CONT_A: "top-k 40"}
    lab.choose_valid(state, keys.LAB_CONT_A, ["greedy", "top-k 3"])
    assert state[keys.LAB_CONT_A] == "greedy"
    lab.choose_valid(state, keys.LAB_CONT_A, ["x", "greedy"])
    assert state[keys.LAB_CONT_A] == "greedy"
    assert lab.source_options(False) == [lab.PROMPT_SOURCE]


def test_the_session_source_follows_each_new_token(tiny):
    session = Session(tiny, "The cat sat on the")
    first = lab.session_source(session)  # prefills the session once
    assert first.ids == session.ids and torch.equal(first.logits, session.pending_logits)
    session.step(SamplingConfig(temperature=0))
    second = lab.session_source(session)
    assert second.fingerprint != first.fingerprint and second.ids == session.ids
    assert len(second.ids) == len(first.ids) + 1 and second.stop_message is None
    session.step(SamplingConfig(temperature=0, max_new_tokens=2))
    assert "2" in lab.session_source(session).stop_message


def test_a_typed_prompt_is_prefilled_once_and_checked(tiny):
    one = lab.prompt_source(tiny, "Once upon a time", False)
    again = lab.prompt_source(tiny, "Once upon a time", False)
    assert again.prefix is one.prefix and again.fingerprint == one.fingerprint
    assert one.ids == tiny.tokenizer("Once upon a time")["input_ids"]
    assert lab.prompt_source(tiny, "Once upon a time", True).ids != one.ids  # chat template
    with pytest.raises(SessionError, match="empty"):
        lab.prompt_source(tiny, "   ", False)


def test_results_are_kept_for_the_logits_they_came_from(tiny):
    state = _state()
    session = Session(tiny, "A bird")
    source = lab.session_source(session)
    run = lab.ContinuationRun("greedy", "temperature 1.5", 2, 3, 5)
    results = lab.run_continuations(tiny, source, lab.presets(state), run)
    direct = sample_continuations(tiny, source.prefix, SamplingConfig(temperature=1.5, seed=5), k=2, m=3)
    assert [c.token_ids for c in results[1].items] == [c.token_ids for c in direct.items]
    assert [r.name for r in results] == ["greedy", "temperature 1.5"] and results[0].n_unique == 1
    lab.store(state, keys.LAB_CONT_RESULT, source, run, results)
    assert measuring.kept(state, keys.LAB_CONT_RESULT, source.fingerprint).result is results
    session.step(SamplingConfig(temperature=0))
    assert measuring.kept(state, keys.LAB_CONT_RESULT, lab.session_source(session).fingerprint) is None  # stale
    assert lab.fits(source, tiny, 3) and not lab.fits(source, tiny, tiny.spec.max_positions)


def test_the_sweep_is_cached_per_set_of_logits():
    logits = torch.randn(300)
    assert lab.sweep(logits) == temperature_sweep(logits)
    assert lab.sweep(logits.clone()) == lab.sweep(logits)
    assert lab.sweep(logits * 2) != lab.sweep(logits)
