"""The dispatcher: order within a scope, interruption, /stop, isolation of scopes, hooks,
preflight before commands, supervised listeners."""

from __future__ import annotations

import asyncio
import io
import os
import pty

from edge.agent.dispatch import Dispatcher, max_in_flight
from edge.agent.hooks import Cancel
from edge.channels.base import Channel, ChannelMessage
from edge.channels.cli import CliChannel
from edge.channels.supervisor import ListenerSupervisor
from tests.fakes.scripted_provider import ScriptedProvider
from tests.helpers import msg, until


class Recorder(Channel):
    """A channel that records what it is asked to send."""

    name = "cli"

    def __init__(self):
        self.sent: list[tuple[str, str]] = []

    async def send(self, message):
        self.sent.append((message.recipient, message.content))

    async def listen(self, bus):
        pass

    async def health_check(self):
        return True


class SlowProvider(ScriptedProvider):
    """Answers 'reply to <last user text>' after a delay; records cancellations."""

    def __init__(self, delay):
        super().__init__([], delay=delay)
        self.cancelled = 0

    async def chat(self, messages, tools=None):
        self.seen.append(list(messages))
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        from edge.providers.base import ChatResponse

        return ChatResponse(f"reply to {messages[-1].content}")


async def run_dispatcher(agent, channel, messages, **kw):
    dispatcher = Dispatcher(agent, {"cli": channel}, debounce_seconds=kw.pop("debounce", 0.0), **kw)
    task = asyncio.create_task(dispatcher.run())
    for m in messages:
        if isinstance(m, float):
            await asyncio.sleep(m)
        else:
            await dispatcher.bus.put(m)
    await dispatcher.drain()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return dispatcher


def test_in_flight_bounds():
    assert [max_in_flight(n) for n in (0, 1, 3, 16, 40)] == [8, 8, 12, 64, 64]


async def test_commands_in_one_scope_run_in_order(make_agent, mock_factory):
    channel = Recorder()
    await run_dispatcher(make_agent(), channel, [msg("/gpio led on"), msg("/gpio led"), msg("/gpio led off"),
                                                 msg("/gpio led")])
    assert [text for _, text in channel.sent] == [
        "gpio:GPIO17 (led) set on", "gpio:GPIO17 (led) is on",
        "gpio:GPIO17 (led) set off", "gpio:GPIO17 (led) is off"]


async def test_newer_message_interrupts_the_running_turn_in_the_same_scope(make_agent):
    provider = SlowProvider(0.3)
    channel = Recorder()
    await run_dispatcher(make_agent(provider), channel, [msg("first"), 0.05, msg("second")])
    assert provider.cancelled == 1
    assert channel.sent == [("alice", "reply to second")]


async def test_other_scopes_are_never_interrupted(make_agent):
    provider = SlowProvider(0.2)
    channel = Recorder()
    await run_dispatcher(make_agent(provider), channel, [msg("a-one"), 0.05, msg("b-one", sender="bob")])
    assert provider.cancelled == 0
    assert sorted(channel.sent) == [("alice", "reply to a-one"), ("bob", "reply to b-one")]


async def test_without_interrupt_turns_queue_in_order(make_agent):
    provider = SlowProvider(0.05)
    channel = Recorder()
    await run_dispatcher(make_agent(provider), channel, [msg("one"), 0.01, msg("two")],
                         interrupt_on_new_message=False)
    assert provider.cancelled == 0
    assert [t for _, t in channel.sent] == ["reply to one", "reply to two"]


async def test_stop_cancels_without_a_new_request_and_saves_nothing(make_agent):
    provider = SlowProvider(0.5)
    channel = Recorder()
    agent = make_agent(provider)
    await run_dispatcher(agent, channel, [msg("long job"), 0.05, msg("/stop"), 0.01, msg("/stop")])
    assert provider.cancelled == 1
    assert channel.sent == [("alice", "Stopped."), ("alice", "Nothing is running.")]
    session = await agent.sessions.open(msg("x").session_key)
    assert session.turns == []


async def test_debounced_texts_become_one_turn(make_agent):
    provider = SlowProvider(0.0)
    channel = Recorder()
    await run_dispatcher(make_agent(provider), channel, [msg("hello"), msg("are you there")], debounce=0.05)
    assert channel.sent == [("alice", "reply to hello\nare you there")]


async def test_a_terminal_line_starts_its_turn_at_once_without_the_chat_debounce(make_agent):
    """Chat channels wait ``debounce_ms`` for the rest of a burst; a terminal line is whole."""
    provider = SlowProvider(0.0)
    stdout = io.StringIO()
    terminal = CliChannel(io.StringIO(), stdout)
    dispatcher = Dispatcher(make_agent(provider), {"cli": terminal}, debounce_seconds=30.0)
    task = asyncio.create_task(dispatcher.run())
    try:
        started = asyncio.get_running_loop().time()
        await dispatcher.bus.put(msg("hello"))
        await until(lambda: stdout.getvalue(), timeout=2.0)
        assert asyncio.get_running_loop().time() - started < 0.2
        assert stdout.getvalue() == "reply to hello\n"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_chat_burst_still_waits_for_the_debounce(make_agent):
    provider = SlowProvider(0.0)
    channel = Recorder()
    dispatcher = Dispatcher(make_agent(provider), {"cli": channel}, debounce_seconds=0.3)
    task = asyncio.create_task(dispatcher.run())
    try:
        await dispatcher.bus.put(msg("hello"))
        await asyncio.sleep(0.15)
        assert channel.sent == []  # still waiting for the rest of the burst
        await dispatcher.bus.put(msg("are you there"))
        await until(lambda: channel.sent, timeout=2.0)
        assert channel.sent == [("alice", "reply to hello\nare you there")]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_piped_lines_are_each_answered_in_order_never_interrupted(make_agent):
    provider = SlowProvider(0.1)
    stdout = io.StringIO()
    piped = CliChannel(io.StringIO(), stdout)
    await run_dispatcher(make_agent(provider), piped, [msg("one"), 0.02, msg("two")],
                         debounce=0.3)
    assert provider.cancelled == 0
    assert stdout.getvalue().splitlines() == ["reply to one", "reply to two"]


def test_typed_lines_interrupt_like_any_chat_and_piped_ones_do_not():
    master, slave = pty.openpty()
    try:
        with open(slave) as tty:
            assert CliChannel(tty, io.StringIO()).newer_message_interrupts
    finally:
        os.close(master)
    assert not CliChannel(io.StringIO(), io.StringIO()).newer_message_interrupts
    assert not CliChannel(io.StringIO(), io.StringIO()).merges_bursts and Recorder().merges_bursts


async def test_unknown_sender_reaches_no_command(make_agent, mock_factory):
    channel = Recorder()
    stranger = ChannelMessage("mallory", "mallory", "/gpio led on", "test")
    await run_dispatcher(make_agent(), channel, [stranger])
    assert channel.sent == [] and mock_factory.pin(17).state == 0


async def test_hooks_can_cancel_inbound_and_rewrite_outbound(make_agent):
    class Hook:
        async def on_message_received(self, m):
            return Cancel("blocked") if "blocked" in m.content else m

        async def on_message_sending(self, m, reply):
            return reply.upper()

    from edge.agent.hooks import HookRunner

    channel = Recorder()
    await run_dispatcher(make_agent(), channel, [msg("/help blocked"), msg("/gpio led")],
                         hooks=HookRunner([Hook()]))
    assert channel.sent == [("alice", "GPIO:GPIO17 (LED) IS OFF")]


async def test_supervisor_restarts_a_failing_listener_and_reports_down_since():
    class Flaky(Channel):
        name = "flaky"

        def __init__(self):
            self.starts = 0

        async def listen(self, bus):
            self.starts += 1
            if self.starts < 3:
                raise ConnectionError("network down")
            await asyncio.sleep(10)

        async def send(self, message):
            pass

        async def health_check(self):
            return True

    channel = Flaky()
    supervisor = ListenerSupervisor(channel, backoff_start=0.05, backoff_max=0.2)
    task = asyncio.create_task(supervisor.run(asyncio.Queue()))
    await asyncio.sleep(0.01)
    health = await supervisor.health()
    assert not health["healthy"] and health["down_since"] and "network down" in health["last_error"]
    await asyncio.sleep(0.3)
    assert channel.starts == 3 and (await supervisor.health())["healthy"]
    assert supervisor.restarts == 2
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
