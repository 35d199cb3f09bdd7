"""The settings table: every SamplingConfig knob once, codes unique, defaults inside their ranges."""
from dataclasses import fields

from autoreg_core import SamplingConfig
from autoreg_ui import keys, settings


def test_every_config_field_but_stop_sequences_has_one_setting():
    covered = [s.field for s in settings.SETTINGS]
    assert sorted(covered) == sorted(f.name for f in fields(SamplingConfig) if f.name != "stop_sequences")
    assert len(set(s.key for s in settings.SETTINGS)) == len(settings.SETTINGS)


def test_link_codes_are_unique_and_the_seed_has_none():
    codes = [s.code for s in settings.SETTINGS if s.code]
    assert len(codes) == len(set(codes)) and settings.STOPS_CODE not in codes
    assert [s.field for s in settings.SETTINGS if not s.code] == ["seed"]


def test_defaults_lie_in_their_ranges():
    for s in settings.SETTINGS:
        value = getattr(settings.SIDEBAR_DEFAULTS, s.field)
        assert s.low <= value <= s.high and isinstance(value, s.kind), s.field


def test_settings_params_leave_defaults_out_and_write_numbers_as_the_url_does():
    from dataclasses import replace

    config = replace(settings.SIDEBAR_DEFAULTS, temperature=1.0, top_k=20, stop_sequences=("\n", "END\t"))
    assert settings.settings_params(config) == {keys.CFG_TEMPERATURE: "1", keys.CFG_TOP_K: "20",
                                                keys.CFG_STOPS: "\\n\nEND\\t"}
    assert settings.settings_params(settings.SIDEBAR_DEFAULTS) == {}
    assert [settings.number_text(v) for v in (2.0, 0.95, 7)] == ["2", "0.95", "7"]
