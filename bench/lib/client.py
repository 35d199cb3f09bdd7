"""One browser tab as the server sees it, minus the rendering: Streamlit's own ``BackMsg`` requests over the
websocket, the widget ids read back from the ``ForwardMsg`` deltas, the token strip's ids, and each request timed
to its ``script_finished``. Only servers on this machine."""
from __future__ import annotations

import asyncio
import re
import time
import urllib.parse
from dataclasses import dataclass, field

ACTION_TIMEOUT_S = 120.0
STEP_PAGE = "step"  # the step page by its name (a bare / opens Start here)
TOKEN_ID = re.compile(r'class="tok gen[^"]*"[^>]*?title="position \d+ · id (\d+)')
FULL_MARK = "The class is full"


@dataclass
class Widget:
    id: str
    kind: str  # the element type: button, slider, number_input ...
    label: str
    fragment_id: str
    default: object = None


@dataclass
class RunResult:
    seconds: float
    status: int  # ForwardMsg.script_finished
    exceptions: list[str]
    tokens: list[int] | None  # generated token ids of the last token strip drawn, None if none drawn
    full: bool  # the "class is full" page was shown
    bytes: int
    alerts: list[str] = field(default_factory=list)  # st.error / warning / info / success texts drawn
    metrics: dict[str, str] = field(default_factory=dict)  # st.metric label → value (the tricks page's cache stats)


class AppClient:
    """One browser tab as the server sees it: a websocket, widget ids, and the last token strip."""

    def __init__(self, url: str, page: str = STEP_PAGE, query: str | None = None):
        parts = urllib.parse.urlsplit(url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the classroom bench only talks to a server on this machine")
        self.ws_url = f"ws://{parts.netloc}/_stcore/stream"
        self.page = page
        # None: no address at all (the steady class). A string: the tab's address, kept as the app rewrites it
        # and sent with every request, as a browser's address bar is (class mode keeps its place there).
        self.query = query
        self.page_hash = ""
        self.auto_rerun: tuple[float, str] | None = None  # a fragment's run_every: (seconds, fragment id)
        self.widgets: dict[str, Widget] = {}  # by the widget's user key
        self.ws = None

    async def connect(self) -> None:
        import websockets

        self.ws = await websockets.connect(self.ws_url, subprotocols=["streamlit"], max_size=None,
                                           open_timeout=ACTION_TIMEOUT_S, ping_interval=None)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def open(self) -> RunResult:
        """Load the page, as a browser does on its first request."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        msg.rerun_script.query_string = self.query or ""
        msg.rerun_script.page_name = self.page
        return await self._send(msg)

    async def poll(self) -> RunResult:
        """What the browser does every ``run_every`` seconds: rerun the polling fragment (it may rerun the app)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        client_state = msg.rerun_script
        client_state.page_script_hash = self.page_hash
        client_state.page_name = self.page
        client_state.query_string = self.query or ""
        client_state.fragment_id = self.auto_rerun[1]
        client_state.is_auto_rerun = True
        return await self._send(msg)

    async def press(self, key: str) -> RunResult:
        """Click the button whose widget key is ``key`` (in its fragment, like the browser)."""
        widget = self.widgets[key]
        return await self._rerun([(widget, "trigger_value", True)], widget.fragment_id)

    async def set_value(self, key: str, value) -> RunResult:
        """Move a slider or type into a number box: the new value, a whole-page rerun."""
        widget = self.widgets[key]
        if widget.kind == "slider":
            return await self._rerun([(widget, "double_array_value", [float(value)])], widget.fragment_id)
        return await self._rerun([(widget, "int_value", int(value))], widget.fragment_id)

    async def _rerun(self, states, fragment_id: str) -> RunResult:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        client_state = msg.rerun_script
        client_state.page_script_hash = self.page_hash
        client_state.page_name = self.page
        if self.query is not None:
            client_state.query_string = self.query
        if fragment_id:
            client_state.fragment_id = fragment_id
        for widget, field_name, value in states:
            state = client_state.widget_states.widgets.add()
            state.id = widget.id
            if field_name == "double_array_value":
                state.double_array_value.data.extend(value)
            else:
                setattr(state, field_name, value)
        return await self._send(msg)

    async def _send(self, msg) -> RunResult:
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        return await asyncio.wait_for(self._until_finished(t0), ACTION_TIMEOUT_S)

    async def _until_finished(self, t0: float) -> RunResult:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        exceptions, tokens, full, n_bytes, alerts, metrics = [], None, False, 0, [], {}
        while True:
            data = await self.ws.recv()
            n_bytes += len(data)
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            kind = fwd.WhichOneof("type")
            if kind == "navigation":  # st.navigation names the page that ran: later reruns ask for it
                self.page_hash = fwd.navigation.page_script_hash or self.page_hash
            elif kind == "page_info_changed" and self.query is not None:
                self.query = fwd.page_info_changed.query_string
            elif kind == "auto_rerun":
                self.auto_rerun = (fwd.auto_rerun.interval, fwd.auto_rerun.fragment_id)
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                etype = element.WhichOneof("type")
                body = getattr(element, etype)
                if etype == "exception":
                    exceptions.append(f"{body.type}: {body.message}"[:300])
                elif etype == "markdown" and 'class="tokstrip"' in body.body:
                    tokens = [int(t) for t in TOKEN_ID.findall(body.body)]
                elif etype in ("heading", "markdown") and FULL_MARK in body.body:
                    full = True
                elif etype == "alert":
                    alerts.append(body.body)
                elif etype == "metric":
                    metrics[body.label] = body.body
                widget_id = getattr(body, "id", "") if etype != "exception" else ""
                if widget_id.startswith("$$ID-"):
                    key = widget_id.split("-", 2)[2]
                    default = list(body.default) if etype == "slider" else getattr(body, "default", None)
                    self.widgets[key] = Widget(widget_id, etype, getattr(body, "label", ""),
                                               fwd.delta.fragment_id, default)
            elif kind == "script_finished":
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # st.rerun: the next run's messages follow on the same request
                return RunResult(time.perf_counter() - t0, int(fwd.script_finished), exceptions, tokens, full,
                                 n_bytes, alerts, metrics)



async def warm_up(url: str) -> None:
    """One page load before the class: the model loads on the server's first page, not a student's."""
    client = AppClient(url)
    await client.connect()
    try:
        await client.open()
    finally:
        await client.close()
