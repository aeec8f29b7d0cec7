"""Server-sent events, as the WHATWG spec parses them; shared by the providers' three wire formats
and the signal-cli channel.

OpenAI sends ``data: {...}`` lines ending with ``data: [DONE]``; Anthropic names each event
(``event: content_block_delta``); Gemini (``alt=sse``) sends one JSON chunk per ``data:`` line.

>>> import asyncio
>>> async def lines():
...     for line in ["event: ping", "data: {}", "", ": comment", "data: a", "data: b", ""]:
...         yield line
>>> async def read():
...     return [(e.event, e.data) async for e in iter_sse(lines())]
>>> asyncio.run(read())
[('ping', '{}'), ('message', 'a\\nb')]
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    event: str = "message"
    data: str = ""
    id: str | None = None


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """Events from decoded lines (line terminators already removed, as httpx's aiter_lines gives).

    An event is dispatched at a blank line; one still open when the lines end is dropped, as the
    spec says, so a connection cut mid-event never yields half an event.
    """
    event, last_id = "", None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield SseEvent(event or "message", "\n".join(data), last_id)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
