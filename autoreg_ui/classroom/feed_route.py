"""The class feed's route on the app's own server (``asgi.py``'s ``st.App``): ``GET /api/class/CODE/feed?seat=ID``,
a stream of server-sent events, one per teacher change (``autoreg_server.feed``).

Only a seat of the class may read it: the seat is checked once, when the stream opens (a student's seat id is a
random token the store handed to that student); a removed student's stream ends at the next edition. The
teacher's key never travels here: nothing in the feed needs it.
"""
from __future__ import annotations

import functools
import gzip
import signal
from contextlib import asynccontextmanager

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from autoreg_server.class_store import normal_code
from autoreg_ui.classroom import feed_view

NOT_A_SEAT = "This feed is for the students seated in the class."
TOO_MANY = "Too many open streams: close another tab of this seat, or try again later."
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # and no proxy may hold the events back


def last_version(request: Request) -> int | None:
    """The version a reconnecting browser already has (``Last-Event-ID``), if it says one."""
    said = request.headers.get("last-event-id", "").strip()
    return int(said) if said.isascii() and said.isdigit() and len(said) <= 18 else None


class ClassFeedRoute:
    """The route as an ASGI app: the seat's stream is counted from the door to the response's very end, however
    it ends (a response cut off before its first byte runs no code of its body, so the body cannot count it)."""

    async def __call__(self, scope, receive, send) -> None:
        request = Request(scope, receive)
        code = normal_code(request.path_params.get("code", ""))
        seat = request.query_params.get("seat", "")[:64]
        if not code or not await run_in_threadpool(feed_view.seated, code, seat):
            await PlainTextResponse(NOT_A_SEAT, status_code=403)(scope, receive, send)
            return
        hub = feed_view.hub()
        if not hub.reserve(code, seat):
            await PlainTextResponse(TOO_MANY, status_code=429, headers={"Retry-After": "30"})(scope, receive, send)
            return
        try:
            stream = hub.editions(code, seat, last_version(request))
            await StreamingResponse(stream, media_type="text/event-stream", headers=HEADERS)(scope, receive, send)
        finally:
            hub.release(code, seat)


@functools.cache
def plotly_js() -> tuple[bytes, bytes]:
    """plotly.min.js as the plotly package ships it, and gzipped (about a third): read and packed once."""
    from plotly.offline import get_plotlyjs

    plain = get_plotlyjs().encode()
    return plain, gzip.compress(plain, 6)


async def plotly_script(request: Request) -> Response:
    plain, packed = await run_in_threadpool(plotly_js)
    headers = {"Cache-Control": "public, max-age=86400", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(packed, media_type="text/javascript", headers=headers | {"Content-Encoding": "gzip"})
    return Response(plain, media_type="text/javascript", headers=headers)


def routes() -> list[Route]:
    return [Route(feed_view.ROUTE, ClassFeedRoute(), methods=["GET"]),
            Route(feed_view.PLOTLY_ROUTE, plotly_script, methods=["GET"])]


def end_streams_on_exit() -> None:
    """On SIGINT or SIGTERM, end the feed's streams before the server's own handler runs: the server stops by
    waiting for every response to end, and a stream never ends by itself. Installed at startup, after the
    server (uvicorn) installed its handlers; a handler that is not Python's own is left alone."""
    for number in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(number)
        if not callable(previous):
            continue

        def handler(signum, frame, previous=previous):
            feed_view.hub().stop()
            previous(signum, frame)

        signal.signal(number, handler)


@asynccontextmanager
async def lifespan(app):
    """The app's start and stop (``st.App``'s lifespan): the streams end with the server."""
    end_streams_on_exit()
    yield
    feed_view.hub().stop()
