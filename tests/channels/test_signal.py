"""Signal end to end against a loopback signal-cli HTTP daemon: SSE in, JSON-RPC out,
allowlist and pairing, approvals by token reply, groups, reconnection after a dropped stream."""

from __future__ import annotations

import asyncio
import json

from edge.channels.pairing import PairingCodes
from edge.core.sse import iter_sse
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.signal_server import signal_config
from tests.helpers import until

OWNER, FRIEND, STRANGER = "+4915111111111", "+4915122222222", "+4915199999999"



def config(server, extra=""):
    return signal_config(server, [OWNER, FRIEND], extra)


def messages_to(server, recipient):
    key = "groupId" if recipient.startswith("grp") else "recipient"
    return [p["message"] for p in server.sent()
            if p.get(key) in (recipient, [recipient])]


async def connected(server, count=1):
    await until(lambda: server.connections >= count and server.streams)


async def test_sse_parser_handles_comments_multiline_and_events():
    async def lines():
        for line in [":keep-alive", "", "event: receive", "data: {\"a\":", "data: 1}", "", "data: x", ""]:
            yield line

    assert [(e.event, e.data) async for e in iter_sse(lines())] == [("receive", '{"a":\n1}'),
                                                                    ("message", "x")]


async def test_allowed_number_switches_the_led(signal_daemon, start_agent, mock_factory):
    await start_agent(config(signal_daemon))
    await connected(signal_daemon)
    signal_daemon.push_message(OWNER, "/gpio led on")
    await until(lambda: messages_to(signal_daemon, OWNER))
    assert messages_to(signal_daemon, OWNER) == ["gpio:GPIO17 (led) set on"]
    assert mock_factory.pin(17).state == 1
    assert all(c["params"]["account"] == signal_daemon.account for c in signal_daemon.calls)


async def test_unknown_number_gets_one_hint_then_pairs(signal_daemon, start_agent, tmp_path, mock_factory):
    await start_agent(config(signal_daemon))
    await connected(signal_daemon)
    signal_daemon.push_message(STRANGER, "/gpio led on")
    signal_daemon.push_message(STRANGER, "please")
    await until(lambda: messages_to(signal_daemon, STRANGER))
    await asyncio.sleep(0.2)
    assert len(messages_to(signal_daemon, STRANGER)) == 1 and mock_factory.pin(17).state == 0
    code = PairingCodes(tmp_path / "state" / "pairing.json").issue("signal").code
    signal_daemon.push_message(STRANGER, f"/pair {code}")
    await until(lambda: len(messages_to(signal_daemon, STRANGER)) == 2)
    assert messages_to(signal_daemon, STRANGER)[1].startswith("Paired")
    assert f'"{STRANGER}"' in (tmp_path / "config.toml").read_text()


async def test_groups_need_a_mention_and_must_be_listed(signal_daemon, start_agent, mock_factory):
    await start_agent(config(signal_daemon))
    await connected(signal_daemon)
    signal_daemon.push_message(OWNER, "/gpio led on", group="other-group",
                               mentions=[{"number": signal_daemon.account, "start": 0, "length": 1}])
    signal_daemon.push_message(OWNER, "/gpio led on", group="grp1")
    await asyncio.sleep(0.3)
    assert signal_daemon.sent() == [] and mock_factory.pin(17).state == 0
    signal_daemon.push_message(OWNER, "\ufffc /gpio led on", group="grp1",
                               mentions=[{"number": signal_daemon.account, "start": 0, "length": 1}])
    await until(lambda: messages_to(signal_daemon, "grp1"))
    assert mock_factory.pin(17).state == 1


LED_ON_BY_MODEL = [(200, completion(None, [{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}])),
                   (200, completion("LED on."))]


async def approval_request(signal_daemon, start_agent, model) -> str:
    """The owner asks the model to switch the LED on; returns the approval prompt it gets."""
    extra = f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
    await start_agent(config(signal_daemon, extra))
    await connected(signal_daemon)
    signal_daemon.push_message(OWNER, "light up the led")
    request = await until(lambda: [m for m in messages_to(signal_daemon, OWNER) if "Approve" in m])
    return request[0]


def token_of(request: str) -> str:
    return request.split('"')[1].split()[0]


async def test_a_failed_reaction_neither_loses_the_answer_nor_ends_the_stream(signal_daemon, start_agent,
                                                                           mock_factory):
    with OpenAIServer(LED_ON_BY_MODEL) as model:
        token = token_of(await approval_request(signal_daemon, start_agent, model))
        signal_daemon.failing = {"sendReaction"}
        signal_daemon.push_message(OWNER, f"{token} approve")
        await until(lambda: "LED on.\n\nReceipt: led: on (read back on)" in messages_to(signal_daemon, OWNER))
        assert mock_factory.pin(17).state == 1
        # the confirmation and the turn it let go on are sent independently: either may come first
        await until(lambda: any(m.startswith("Approved") for m in messages_to(signal_daemon, OWNER)))
        assert signal_daemon.connections == 1  # the event stream was never dropped


async def test_approval_by_token_reply_only_from_the_requester(signal_daemon, start_agent, mock_factory):
    with OpenAIServer(LED_ON_BY_MODEL) as model:
        token = token_of(await approval_request(signal_daemon, start_agent, model))
        signal_daemon.push_message(FRIEND, f"{token} approve")
        await until(lambda: messages_to(signal_daemon, FRIEND))
        assert messages_to(signal_daemon, FRIEND) == [
            "Only the person who asked (or an admin) can answer this request."]
        assert mock_factory.pin(17).state == 0
        signal_daemon.push_message(OWNER, f"{token} always")
        await until(lambda: "LED on.\n\nReceipt: led: on (read back on)" in messages_to(signal_daemon, OWNER))
        assert mock_factory.pin(17).state == 1
        reactions = signal_daemon.sent("sendReaction")
        assert [r["emoji"] for r in reactions] == ["❌", "✅"]
        assert signal_daemon.sent("sendTyping")


async def test_dropped_stream_reconnects(signal_daemon, start_agent):
    agent = await start_agent(config(signal_daemon))
    await connected(signal_daemon)
    signal_daemon.drop_streams()  # reconnects after the 2 s initial backoff
    await until(lambda: signal_daemon.connections >= 2, timeout=10)
    await connected(signal_daemon, 2)
    signal_daemon.push_message(OWNER, "/gpio led")
    await until(lambda: messages_to(signal_daemon, OWNER))
    health = (await agent.runtime.status())["channels"][0]
    assert health["healthy"] and health["restarts"] == 1
    assert "closed the event stream" in health["last_error"]


def _receive(sender: str, text: str, timestamp: int) -> str:
    return json.dumps({"envelope": {"sourceNumber": sender, "timestamp": timestamp,
                                    "dataMessage": {"timestamp": timestamp, "message": text}}})


async def test_same_millisecond_from_two_senders_are_two_messages():
    """Signal timestamps are chosen by the sending device: they collide across senders."""
    from edge.agent.preflight import ChannelAccess, Preflight
    from edge.channels.signal import SignalChannel

    channel = SignalChannel("http://127.0.0.1:9", "+4900", {OWNER, FRIEND})
    bus: asyncio.Queue = asyncio.Queue()
    try:
        for sender in (OWNER, FRIEND, OWNER):  # the third is a real duplicate (redelivery)
            await channel._handle(_receive(sender, "/gpio led", 1700000000000), bus)
    finally:
        await channel.aclose()
    messages = [bus.get_nowait() for _ in range(bus.qsize())]
    preflight = Preflight({"signal": ChannelAccess({OWNER, FRIEND})})
    admitted = [m.sender for m in messages if preflight.admit(m) is None]
    assert admitted == [OWNER, FRIEND]


async def test_approval_tokens_are_answered_in_any_case(signal_daemon, start_agent, mock_factory):
    with OpenAIServer(LED_ON_BY_MODEL) as model:
        request = await approval_request(signal_daemon, start_agent, model)
        assert request.startswith("Approve: switch gpio:GPIO17 (led) on?")
        token = token_of(request)
        signal_daemon.push_message(OWNER, f"{token.upper()} APPROVE")
        await until(lambda: "LED on.\n\nReceipt: led: on (read back on)" in messages_to(signal_daemon, OWNER))
        assert mock_factory.pin(17).state == 1


async def test_pairing_guesses_are_limited_per_sender(signal_daemon, start_agent, tmp_path):
    await start_agent(config(signal_daemon))
    await connected(signal_daemon)
    for guess in range(8):
        signal_daemon.push_message(STRANGER, f"/pair WRONG{guess}")
    await asyncio.sleep(1.5)
    replies = messages_to(signal_daemon, STRANGER)
    assert replies.count("That pairing code is wrong or has expired.") == 5  # then silence
