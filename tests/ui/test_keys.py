"""Every session_state key is one unique string, so no two widgets or results can collide."""
from autoreg_ui import keys


def test_keys_are_unique_strings():
    values = {name: value for name, value in vars(keys).items() if name.isupper() and isinstance(value, str)}
    assert len(values) > 100
    by_value: dict[str, list[str]] = {}
    for name, value in values.items():
        by_value.setdefault(value, []).append(name)
    assert {v: n for v, n in by_value.items() if len(n) > 1} == {}


def test_job_keys_derive_their_run_stop_and_table_keys():
    job = keys.JobKeys("srv_batch_kept")
    assert len({job.run, job.stop, job.table, job.kept}) == 4
