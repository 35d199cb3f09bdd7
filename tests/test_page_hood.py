"""The "Under the hood" page under Streamlit's AppTest, on the tiny model (allowlisted from a folder)."""
from __future__ import annotations

import pytest

from autoreg_ui import keys
from autoreg_ui.lessons.hood import text

PAGE = "pages/10_hood.py"


@pytest.fixture
def page(open_page):
    return open_page(PAGE)


def _click(at, key: str) -> None:
    at.button(key=key).click()
    at.run()
    assert not at.exception, at.exception


def _open(at, label: str) -> None:
    at.tabs[0].open = True if False else at.tabs[0].open  # noqa: PLW0127 - AppTest has no tab click; use the key
    at.session_state[keys.HOOD_SECTION] = label
    at.run()
    assert not at.exception, at.exception


def _markdown(at) -> list[str]:
    return [m.value for m in at.markdown]


def test_the_loss_section_scores_the_tabs_text_and_matches_the_steps(page):
    assert page.title[0].value == text.TITLE
    for _ in range(3):
        _click(page, f"{keys.HOOD_PAGE}_next")
    session = page.session_state[keys.SESSION]
    assert len(session.records) == 3
    _click(page, keys.HOOD_LOSS.run)
    metrics = {m.label: m.value for m in page.metric}
    assert metrics["Terms from one pass"] == f"{len(session.ids) - 1:,}"
    assert float(metrics["Largest gap to the records"].split()[0]) < 1e-4
    rows = [d.value for d in page.dataframe if "−log p, one pass" in d.value.columns][0]
    assert list(rows["part"]) == ["prompt"] * (session.prompt_len - 1) + ["generated"] * 3
    assert any(m.startswith("For the 3 generated tokens, each one-pass term equals") for m in _markdown(page))
