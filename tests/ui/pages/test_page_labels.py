"""Every page's labels, texts and widget keys, numbers masked, equal to the recorded ``tests/data/page_labels.json``.

A restructuring must leave what a learner sees as it was; a change that means to alter a page records the new
dump (``python tests/page_dump.py tests/data/page_labels.json``) in the same commit, so the diff shows every
sentence and key it changed.
"""
import difflib
import json
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.integration
RECORDED = ROOT / "tests" / "data" / "page_labels.json"


def page_differences(recorded: dict[str, list[str]], now: dict[str, list[str]]) -> list[str]:
    """A unified diff per page that differs, and a line per page found in only one of the two dumps."""
    found = [f"only recorded: {page}" for page in sorted(set(recorded) - set(now))]
    found += [f"only now: {page}" for page in sorted(set(now) - set(recorded))]
    for page in sorted(set(recorded) & set(now)):
        if recorded[page] != now[page]:
            found.append("\n".join(difflib.unified_diff(recorded[page], now[page], f"{page} recorded", f"{page} now",
                                                        lineterm="")))
    return found


def test_every_page_shows_what_was_recorded(tmp_path):
    out = tmp_path / "now.json"
    subprocess.run([sys.executable, str(ROOT / "tests" / "page_dump.py"), str(out)], cwd=ROOT, check=True,
                   capture_output=True, text=True, timeout=600)
    recorded, now = json.loads(RECORDED.read_text()), json.loads(out.read_text())
    assert len(recorded) == 14 and sum(len(lines) for lines in recorded.values()) > 1000
    assert page_differences(recorded, now) == []


def test_the_comparison_finds_a_changed_label_a_lost_line_and_a_lost_page():
    recorded = {"step": ["button key=step_next label=Next token", "caption body=# tokens"], "glossary": ["title"]}
    assert page_differences(recorded, recorded) == []
    changed = {"step": ["button key=step_next label=Next tok", "caption body=# tokens"], "glossary": ["title"]}
    assert "+button key=step_next label=Next tok" in page_differences(recorded, changed)[0]
    shorter = {"step": ["button key=step_next label=Next token"], "glossary": ["title"]}
    assert "-caption body=# tokens" in page_differences(recorded, shorter)[0]
    assert page_differences(recorded, {"step": recorded["step"]}) == ["only recorded: glossary"]
