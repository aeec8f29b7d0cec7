"""The uplink watch: a remote endpoint that stops accepting connections (a real loopback
server, closed) moves the agent's turns to the local endpoint and tells the admins once; when it
listens again the remote answers again, said once too."""

from __future__ import annotations

import asyncio

from edge.config.model import ProviderConfig
from edge.providers.factory import create_provider
from edge.providers.uplink import UplinkWatch


async def listener(port: int = 0) -> asyncio.Server:
    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    return await asyncio.start_server(accept, "127.0.0.1", port)


async def test_a_lost_uplink_turns_to_the_local_model_and_back() -> None:
    remote = await listener()
    port = remote.sockets[0].getsockname()[1]
    switch = create_provider(ProviderConfig(
        name="cloud", base_url=f"http://127.0.0.1:{port}/v1", model="big",
        compact_profile=False,
        fallbacks=[{"preset": "llamacpp", "model": "qwen2.5-0.5b"}]))
    assert switch is not None
    told: list[str] = []

    async def tell(text: str) -> None:
        told.append(text)

    watch = UplinkWatch(switch, tell)
    assert watch.needed and switch.active == "cloud" and not switch.compact_profile
    await watch.check()
    assert told == [] and switch.active == "cloud"

    remote.close()
    await remote.wait_closed()
    await watch.check()
    await watch.check()  # said once
    assert switch.active == "llamacpp" and switch.compact_profile
    assert told == ["The uplink to cloud is down: llamacpp (the local model) answers until it "
                    "is back. Pins, rules and interlocks go on."]

    again = await listener(port)
    try:
        await watch.check()
        await watch.check()
    finally:
        again.close()
        await again.wait_closed()
        await switch.aclose()
    assert switch.active == "cloud" and told[1:] == ["The uplink to cloud is back: it answers again."]


def test_nothing_to_watch_without_a_local_endpoint() -> None:
    switch = create_provider(ProviderConfig(preset="openai", model="gpt-4o-mini", api_key="k"))
    assert switch is not None

    async def tell(text: str) -> None:
        raise AssertionError(text)

    assert not UplinkWatch(switch, tell).needed
