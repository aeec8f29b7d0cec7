"""Providers that answer from a script, for agent paths that need no HTTP server."""

from __future__ import annotations

import asyncio

from edge.providers.base import ChatResponse, Provider, StreamDone, TextDelta


class ScriptedProvider(Provider):
    """A provider object that answers from a list (for paths no HTTP server is needed for)."""

    name = "scripted"
    model = ""

    def __init__(self, replies, delay=0.0):
        self.replies = list(replies)
        self.seen = []
        self.model = "scripted-model"
        self.delay = delay

    async def chat(self, messages, tools=None, *, model=None):
        self.seen.append(list(messages))
        await asyncio.sleep(self.delay)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, ChatResponse) else ChatResponse(reply)

    async def aclose(self):
        pass


class StreamingProvider(ScriptedProvider):
    """Streams each scripted reply word by word, in the provider layer's event types."""

    async def stream(self, messages, tools=None, *, model=None):
        response = await self.chat(messages, tools)
        for word in response.text.split(" "):
            yield TextDelta(word + " ")
        yield StreamDone(response)
