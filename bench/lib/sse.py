"""A light server-sent-events client for the benches: one asyncio connection per listener and nothing else, so a
thousand followers fit in one process (a browser tab each would not fit on the machine being measured).

It speaks just what the app's feed sends: HTTP/1.1, a chunked body, ``id:``/``event:``/``data:`` lines.
"""
from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    id: str | None
    event: str
    data: str


class StreamRefused(RuntimeError):
    """The server answered the stream's request with something other than 200."""


async def connect(url: str, headers: dict[str, str] | None = None,
                  timeout: float = 30.0) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open ``url`` (http only) and read the response's head; raises ``StreamRefused`` on a status other than 200."""
    parts = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port or 80), timeout)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    lines = [f"GET {target} HTTP/1.1", f"Host: {parts.netloc}", "Accept: text/event-stream",
             *(f"{k}: {v}" for k, v in (headers or {}).items()), "", ""]
    writer.write("\r\n".join(lines).encode())
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    status = head.split(b"\r\n", 1)[0].split()
    if len(status) < 2 or status[1] != b"200":
        writer.close()
        raise StreamRefused(head.split(b"\r\n", 1)[0].decode(errors="replace"))
    if b"transfer-encoding: chunked" not in head.lower():
        writer.close()
        raise StreamRefused("the stream's body is not chunked")
    return reader, writer


async def chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The body of a chunked response, chunk by chunk, until its last (empty) chunk or the connection's end."""
    while True:
        size_line = await reader.readline()
        if not size_line:
            return
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            return
        data = await reader.readexactly(size + 2)
        yield data[:-2]


def parse(block: str) -> Event | None:
    """One event's lines; None for a comment (a keep-alive) or a block without data."""
    id_, kind, data = None, "message", []
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            id_ = value
        elif name == "event":
            kind = value
        elif name == "data":
            data.append(value)
    return Event(id_, kind, "\n".join(data)) if data else None


async def events(reader: asyncio.StreamReader) -> AsyncIterator[Event]:
    """The stream's events, in order, until it ends."""
    pending = ""
    async for chunk in chunks(reader):
        pending += chunk.decode()
        while "\n\n" in pending:
            block, pending = pending.split("\n\n", 1)
            event = parse(block)
            if event is not None:
                yield event
