"""A measured figure has one home, docs/measurements.md: no other page of the README or docs/, and no prose of
that page under its tables, writes one of its results or references again. The check also runs once on a
made-up page that repeats figures, so a check that stopped looking fails."""
from __future__ import annotations

from .figures import figures, prose, repeated, table_figures
from .markdown_refs import DOCS, ROOT

MEASUREMENTS = ROOT / "docs" / "measurements.md"


def test_no_measured_figure_is_written_twice():
    text = MEASUREMENTS.read_text(encoding="utf-8")
    measured = table_figures(text)
    assert len(measured) > 40  # the tables were read: every goal's result and reference
    pages = {page.name: page.read_text(encoding="utf-8") for page in DOCS if page != MEASUREMENTS}
    pages["measurements.md, outside its tables"] = prose(text)
    assert repeated(measured, pages) == []


def test_the_figure_check_catches_a_repeat_and_leaves_goals_commands_and_dates_alone():
    page = ("| goal | current result | command | date, machine load | reference in the same run |\n"
            "|---|---|---|---|---|\n"
            "| p95 ≤ 2 s | **met**: p50 1.44 s, p95 1.70 s; all 4,800 updates; 8.7–9.2 ms | `bench --x 120` "
            "| 2026-11-26, load 0.8 | solo step 60.0 ms |\n\nThe delay stayed under 2 s.\n")
    measured = table_figures(page)
    assert measured == {"1.44 s", "1.70 s", "4,800", "8.7 ms", "9.2 ms", "60.0 ms"}
    other = {"README.md": "A lecture: p95 1.70 s, 4,800 updates, a 2 s goal, 120 followers, 60.0 ms a step.",
             "ops.md": "a bare click costs 8.7 to 9.2 ms"}
    assert repeated(measured, other) == ["README.md: 1.70 s", "README.md: 4,800", "README.md: 60.0 ms",
                                         "ops.md: 9.2 ms"]
    assert repeated(measured, {"measurements.md prose": prose(page)}) == []
    assert figures("33.5 and 37.8 ms; 3.85× and 4.11×; 889 against 3,555 KiB; 1,272 → 1,286 MiB") == {
        "33.5 ms", "37.8 ms", "3.85 ×", "4.11 ×", "889 KiB", "3,555 KiB", "3,555", "1,272 MiB", "1,286 MiB",
        "1,272", "1,286"}
