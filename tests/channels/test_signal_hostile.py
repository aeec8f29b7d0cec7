"""Signal under attack, end to end against the loopback signal-cli daemon: a burst of malformed
events (not JSON, wrong types at every level, absurd sizes) is logged and dropped, none of them
gets through, the event stream is never restarted, and an allowed number's `/gpio led on` still
works within 2 s."""

from __future__ import annotations

import asyncio
import logging

from tests.fakes.signal_server import MALFORMED, SPOOFED, FakeSignal, event, signal_config
from tests.helpers import until

OWNER = SPOOFED
LED_ON = "gpio:GPIO17 (led) set on"



def config(server) -> str:
    return signal_config(server, [OWNER])


def messages_to(server: FakeSignal, recipient: str) -> list[str]:
    return [p["message"] for p in server.sent() if p.get("recipient") == [recipient]]


async def started(server: FakeSignal, start_agent):
    agent = await start_agent(config(server))
    await until(lambda: server.connections >= 1 and server.streams)
    return agent


async def test_malformed_events_are_dropped_and_the_allowed_number_still_works(
        signal_daemon, start_agent, mock_factory, caplog):
    assert len(MALFORMED) >= 30
    agent = await started(signal_daemon, start_agent)
    caplog.set_level(logging.INFO, logger="edge.channels")
    signal_daemon.push_raw(*MALFORMED.values())
    signal_daemon.push_typing(OWNER)
    signal_daemon.push_message(OWNER, "/gpio led on")
    await until(lambda: messages_to(signal_daemon, OWNER), timeout=2.0)
    assert mock_factory.pin(17).state == 1
    await asyncio.sleep(0.3)  # a spoofed "/gpio led on" that got through would be answered too
    assert messages_to(signal_daemon, OWNER) == [LED_ON]
    ignored = [r for r in caplog.records if r.getMessage().startswith("signal_event_ignored")]
    assert len([r for r in ignored if r.levelno == logging.WARNING]) == len(MALFORMED)
    assert len([r for r in ignored if "reason=unhandled_kind" in r.getMessage()]) == 1  # typing
    assert "x" * 100 not in caplog.text  # the huge text is not logged
    assert agent.runtime.supervisors["signal"].restarts == 0
    assert signal_daemon.connections == 1


async def test_the_stream_survives_a_malformed_event_between_two_commands(
        signal_daemon, start_agent, mock_factory):
    agent = await started(signal_daemon, start_agent)
    signal_daemon.push_message(OWNER, "/gpio led on")
    await until(lambda: messages_to(signal_daemon, OWNER), timeout=2.0)
    signal_daemon.push_raw("{not json", event(data={"groupInfo": {"groupId": ["grp1"]}}),
                           event(data={"mentions": ["+4915100000000"]}))
    signal_daemon.push_message(OWNER, "/gpio led off")
    await until(lambda: len(messages_to(signal_daemon, OWNER)) == 2, timeout=2.0)
    assert messages_to(signal_daemon, OWNER)[1] == "gpio:GPIO17 (led) set off"
    assert mock_factory.pin(17).state == 0
    assert agent.runtime.supervisors["signal"].restarts == 0
    assert signal_daemon.connections == 1
