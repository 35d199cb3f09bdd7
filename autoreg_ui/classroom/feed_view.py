"""What a following student sees, as the class's feed document: built once per teacher change in this process
(``autoreg_server.feed``) and pushed to every follower, drawn in the page by ``hall.js``.

The pieces are the ones the follower's page draws today, from the same builders and the same per-text memo
(``class_live.memo``): the token strip's HTML (every token escaped by ``token_strip_html``), the last step's
bars as a plotly figure, the teacher's settings line. ``page`` lists what the rest of the student's page
depends on (the question shown, the sampling round, the lesson stop): when it changes, the page reruns; a
teacher's plain step does not rerun anybody's page.

Built outside any tab (the feed's watcher thread): nothing here draws. (Rebuilding a text this process does not
hold loads the model through ``autoreg_ui.state.shared_bundle``, Streamlit's resource cache.)
"""
from __future__ import annotations

import json
import re
from typing import Any

from autoreg_core.engine.loading import EMBEDDED_MODEL
from autoreg_core.engine.replay import config_to_dict, recipe_from_dict
from autoreg_core.engine.session import SessionSnapshot
from autoreg_server import feed, live_classes
from autoreg_server.class_store import ClassInfo
from autoreg_server.once import Once
from autoreg_ui.classroom import live as class_live
from autoreg_ui.classroom import text
from autoreg_ui.classroom.desk import shown_question
from autoreg_ui.classroom.figures import shared
from autoreg_ui.step_figures import token_strip_html, top_of_record, topn_figure

TOP_N = 10  # bars in the teacher's last step, as the student sees it
ROUTE = "/api/class/{code}/feed"
PLOTLY_ROUTE = "/api/plotly.js"  # the plotly.js of the installed plotly package, which made the figures


def plotly_src() -> str:
    """plotly.js's address, with the plotly version in it: a browser's day-long copy never outlives an upgrade."""
    import plotly

    return f"{PLOTLY_ROUTE}?v={plotly.__version__}"


def feed_path(code: str, seat: str) -> str:
    """Where a follower's page listens, from the server's root (the page's own origin). It names the class as
    ``class=`` too, as every class link does: a balancer that routes classes to their replica by it
    (``deploy/haproxy.cfg``) sends the stream where the class lives, cookie or not."""
    from urllib.parse import quote

    code_, seat_ = quote(code, safe=""), quote(seat, safe="")
    return f"{ROUTE.format(code=code_)}?class={code_}&seat={seat_}"


def page_key(info: ClassInfo, snapshot: SessionSnapshot | None, question, stop: dict | None, rnd) -> list:
    """What the Streamlit part of a follower's page is drawn from: whether the teacher has a text yet, the
    question shown (open or revealed, while the text is at its step), the sampling round and whether the
    teacher's text is still the one it draws from (``student.my_draw`` shows a draw only then), and the stop
    (the whole of it: another path's stop of the same number is another stop).
    The page reruns when this changes."""
    steps = None if snapshot is None else len(snapshot.records)
    shown = None if steps is None else shown_question(question, steps)
    current = rnd is not None and snapshot is not None and tuple(rnd.context) == tuple(snapshot.ids)
    return [steps is not None, None if shown is None else [shown.id, shown.revealed is not None],
            [info.open_round, current], stop]


def document(info: ClassInfo, snapshot: SessionSnapshot | None, question, stop: dict | None,
             rnd=None) -> dict[str, Any]:
    """The follower's view of the class at ``info.version`` (``snapshot``: the teacher's text at its recipe;
    ``rnd``: the open sampling round, if any)."""
    doc: dict[str, Any] = {"schema": feed.SCHEMA, "code": info.code, "version": info.version,
                           "page": page_key(info, snapshot, question, stop, rnd), "text": None}
    if snapshot is None:
        return doc
    model = snapshot.bundle.name
    records = list(snapshot.records)
    strip = class_live.memo(("strip", info.code), info.recipe, model,
                            lambda: token_strip_html(snapshot.views(), records, snapshot.prompt_len))
    config = recipe_from_dict(info.recipe).config_at(max(1, len(records)))
    doc["text"] = {
        "model": model,
        "prompt_len": snapshot.prompt_len,
        "generated": [r.token_id for r in records],
        "strip": strip,
        "settings": text.SETTINGS_LINE.format(settings=text.settings_text(config_to_dict(config))),
        "step": None,
    }
    if records:
        last = records[-1]
        fig = class_live.memo(("last step", info.code), info.recipe, model,
                              lambda: last_step_figure(snapshot.bundle.tokenizer, last))
        figure = class_live.memo(("last step json", info.code), info.recipe, model, lambda: _plain(fig))
        doc["text"]["step"] = {"index": last.index, "caption": text.LAST_STEP_CHART.format(n=last.index),
                               "figure": figure}
    return doc


def last_step_figure(tokenizer, last):
    """The teacher's last step as bars. Built once per class and text in this process (``class_live.memo``)
    and shared by every edition of that text, so nobody changes it after: a ``SharedFigure``."""
    fig = topn_figure(tokenizer, top_of_record(last, TOP_N), text.LAST_STEP_CHART.format(n=last.index))
    # the caption above says what it is: on a phone the title was cut and the chart's toolbar covered it and
    # the legend, so the legend sits under the toolbar, across the width
    fig.update_layout(title=None, legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
                      margin=dict(l=10, r=10, t=100, b=10))
    return shared(fig)


def _plain(fig) -> dict:
    """The figure as JSON without plotly's default template (7 KB of defaults in every edition, which the page
    replaces with its own colours anyway)."""
    figure = json.loads(fig.to_json())
    figure.get("layout", {}).pop("template", None)
    return figure


def build(code: str) -> tuple[int, dict, frozenset[str]] | None:
    """The feed's edition of class ``code`` now (see ``autoreg_server.feed.Build``)."""
    store = class_live.store()
    info = store.info(code)
    if info is None:
        return None
    removed = frozenset(s.student for s in store.students(code) if s.removed)
    found = class_live.held_or_rebuilt(code, info, _bundle)
    snapshot = None if found is None else found[0]
    question = store.question(code, info.open_question)  # what the student's page shows (``student.view``)
    rnd = store.round(code, info.open_round)
    return info.version, document(info, snapshot, question, store.stop(code), rnd), removed


def _bundle():
    """The model a class's text is rebuilt with when this process does not hold the teacher's snapshot: the
    embedded one, as a follower's tab would (a follower's tab uses the model it has selected, by default that
    one)."""
    from autoreg_ui.state import shared_bundle

    return shared_bundle(EMBEDDED_MODEL)


SEAT_SHAPE = re.compile(r"[A-Za-z0-9_-]{16}")  # what the store hands out (``secrets.token_urlsafe(12)``)


def seated(code: str, seat: str) -> bool:
    """Whether ``seat`` may read class ``code``'s feed: a student seated in it now (checked once, at connect).
    A seat not shaped like the store's is refused before the store is read."""
    if not SEAT_SHAPE.fullmatch(seat or ""):
        return False
    student = class_live.store().student(code, seat)
    return student is not None and not student.removed


def _store_version(code: str) -> int | None:
    return live_classes.shared().store().watched_version(code)


def _store_watch(code: str):
    return live_classes.shared().store().backend.watch(code)


def _make_hub() -> feed.FeedHub:
    made = feed.FeedHub(build, _store_version, _store_watch)
    live_classes.shared().store().on_change(made.nudge)  # a teacher's change here reaches the feed at once
    return made


_hub: Once[feed.FeedHub] = Once(_make_hub)


def hub() -> feed.FeedHub:
    """This process's class feeds."""
    return _hub.get()
