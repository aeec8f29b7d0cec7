"""Fixtures: a loopback server per fake, shut down after each test."""

from __future__ import annotations

from contextlib import AsyncExitStack

import pytest

from tests.providers.loopback import LoopbackServer


@pytest.fixture
async def serve():
    """``server = await serve(fake)``: the fake behind a real HTTP server on 127.0.0.1."""
    async with AsyncExitStack() as stack:
        async def start(fake) -> LoopbackServer:
            return await stack.enter_async_context(LoopbackServer(fake))

        yield start
