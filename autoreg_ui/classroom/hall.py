"""A following student's view of the teacher's text, drawn in the page from the class's feed (``hall.js``,
Streamlit's components v2, no iframe): the token strip, the teacher's settings and the last step's bars change
as the teacher acts, without a rerun of the student's page.

The page draws it twice, ``STRIP`` above the guess box and ``STEP`` below it; both parts share one
connection to the feed (``/api/class/CODE/feed``, ``feed_route``). Each mount carries the document the page
was drawn from, so the view is whole before the feed answers (and in a test with no browser). When the feed
says something the rest of the page is drawn from has changed (a question, a sampling round, the lesson's
stop, the class's end, the student's removal), the view asks for one rerun (``news``).

The strip's HTML is the one ``token_strip_html`` builds, every token escaped; the chart is the last step's
figure (``feed_view.last_step_figure``), drawn in the page's colours by the plotly.js of the plotly package the
figure was made with (``plotly_src``), with its bars also listed as text for a screen reader.

When the stream is lost for good (the browser gives up on an answer other than the stream: the seat was
removed, the class ended, or the server was away), the view asks for a rerun, which says why or mounts again.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

import streamlit as st

from autoreg_ui import charts
from autoreg_ui.classroom import feed_view, text

HERE = Path(__file__).parent
STRIP, STEP = "strip", "step"
KEY = "class_hall_"  # + the part: the element's key


@cache
def _component():
    return st.components.v2.component(
        "autoreg_hall", html='<div class="autoreg-hall"></div>', css=(HERE / "hall.css").read_text(),
        js=(HERE / "hall.js").read_text(), isolate_styles=False)


def hall(part: str, doc: dict, seat: str, large: bool) -> None:
    """Mount one part of the view (``STRIP`` or ``STEP``) for ``seat``, drawn first from ``doc``."""
    data = {"part": part, "url": feed_view.feed_path(doc["code"], seat), "plotly": feed_view.plotly_src(),
            "doc": doc, "large": large, "sizes": charts.LARGE if large else None,
            "growth": charts.HEIGHT_GROWTH,
            "texts": {"reconnecting": text.FEED_RECONNECTING, "connecting": text.FEED_CONNECTING}}
    _component()(key=KEY + part, data=data, on_news_change=_news, width="stretch", height="content")


def _news() -> None:
    """The feed said the page is drawn from something that changed: the rerun this callback belongs to redraws
    it (nothing else to do)."""
