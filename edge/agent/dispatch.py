"""The dispatcher. Every channel pushes onto one bounded bus (capacity 100); for each
message, in arrival order:

1. hook ``on_message_received`` (modify or cancel);
2. preflight: duplicate ids, sender allowlist, mention in groups (before commands: they actuate);
3. ``/stop`` cancels the scope's running turn; other commands are answered without the model;
4. text becomes a model turn, debounced per scope (300 ms) on channels where people send bursts
   (``Channel.merges_bursts``; a terminal line goes at once); with ``interrupt_on_new_message`` a
   newer turn cancels the scope's running one and waits for it, unless its channel says its
   messages are answered in order (``Channel.newer_message_interrupts``, piped input);
5. the reply passes hook ``on_message_sending``, then is chunked and delivered with retry.

A scope is channel + reply target + sender + thread; scopes never cancel each other, and work
within one scope runs in order. A semaphore bounds turns in flight (4 per channel, 8..64).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from edge.agent.debounce import InboundDebouncer, merge
from edge.agent.hooks import HookRunner
from edge.agent.pipeline import Agent
from edge.channels.base import Channel, ChannelMessage, SendMessage

if TYPE_CHECKING:
    from edge.agent.drafts import Draft

log = logging.getLogger(__name__)

BUS_CAPACITY = 100
PARALLELISM_PER_CHANNEL = 4
MIN_IN_FLIGHT, MAX_IN_FLIGHT = 8, 64
TYPING_INTERVAL_SECONDS = 4.0


def max_in_flight(channel_count: int) -> int:
    return max(MIN_IN_FLIGHT, min(MAX_IN_FLIGHT, channel_count * PARALLELISM_PER_CHANNEL))


class Dispatcher:
    def __init__(self, agent: Agent, channels: dict[str, Channel], *,
                 hooks: HookRunner | None = None, interrupt_on_new_message: bool = True,
                 debounce_seconds: float = 0.3, debounce_max_wait: float = 2.0,
                 delivery_base_delay: float = 1.0):
        self.agent = agent
        self.channels = channels
        self.hooks = hooks or HookRunner()
        self.interrupt = interrupt_on_new_message
        self.delivery_base_delay = delivery_base_delay
        self.bus: asyncio.Queue[ChannelMessage] = asyncio.Queue(maxsize=BUS_CAPACITY)
        self.debouncer = InboundDebouncer(self._start_turn, debounce_seconds, debounce_max_wait)
        self._slots = asyncio.Semaphore(max_in_flight(len(channels)))
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._turns: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Consume the bus until cancelled; cancelling also cancels the work in flight."""
        try:
            while True:
                msg = await self.bus.get()
                try:
                    await self._admit(msg)
                except Exception:
                    log.exception("admit_failed channel=%s id=%s", msg.channel, msg.id)
                finally:
                    self.bus.task_done()
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _admit(self, msg: ChannelMessage) -> None:
        received = await self.hooks.received(msg)
        if received is None or self.agent.preflight.admit(received) is not None:
            return
        msg = received
        log.info("message_received channel=%s from=%s id=%s chars=%d",
                 msg.channel, msg.sender, msg.id, len(msg.content))
        from edge.agent.commands import parse_command  # with the first message: idle memory

        command = parse_command(msg.content)
        if command and command[0] == "stop":
            await self.debouncer.flush(msg.interruption_scope)
            self._spawn(msg.interruption_scope, lambda: self._stop(msg), chained=False)
        elif command:
            await self.debouncer.flush(msg.interruption_scope)
            self._spawn(msg.interruption_scope, lambda: self._command(msg, command))
        else:
            mergeable = self.channels[msg.channel].merges_bursts and not msg.attachments
            await self.debouncer.submit(msg, mergeable=mergeable)

    async def _start_turn(self, messages: list[ChannelMessage]) -> None:
        msg = merge(messages) if len(messages) > 1 else messages[0]
        scope = msg.interruption_scope
        running = self._turns.get(scope)
        interrupts = self.interrupt and self.channels[msg.channel].newer_message_interrupts
        if interrupts and running is not None and not running.done():
            log.info("turn_interrupted scope_sender=%s by_id=%s", msg.sender, msg.id)
            running.cancel()
        self._turns[scope] = self._spawn(scope, lambda: self._turn(msg))

    def _spawn(self, scope: str, work: Callable[[], Awaitable[None]], chained: bool = True
               ) -> asyncio.Task[None]:
        previous = self._tails.get(scope) if chained else None
        task = asyncio.create_task(self._after(previous, work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if chained:
            self._tails[scope] = task
            task.add_done_callback(lambda t: self._tails.get(scope) is t and self._tails.pop(scope))
        return task

    @staticmethod
    async def _after(previous: asyncio.Task[None] | None, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` once the scope's previous work is done (however it ended)."""
        try:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(previous)
        except asyncio.CancelledError:
            if previous is None or not previous.cancelled():
                raise  # this task itself was cancelled
        await work()

    async def _stop(self, msg: ChannelMessage) -> None:
        running = self._turns.get(msg.interruption_scope)
        if running is None or running.done():
            await self._send(msg, "Nothing is running.")
            return
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(running)
        await self._send(msg, "Stopped.")

    async def _command(self, msg: ChannelMessage, parsed: tuple[str, list[str]]) -> None:
        async with self._slots:
            try:
                reply = await self.agent.command(msg, parsed)
            except Exception as exc:
                log.exception("command_failed by=%s", msg.caller)
                reply = f"That command failed inside the agent ({type(exc).__name__}); see the logs."
        await self._send(msg, reply)

    async def _turn(self, msg: ChannelMessage) -> None:
        from edge.agent.drafts import Draft, supports_drafts  # with the first turn: idle memory

        channel = self.channels[msg.channel]
        draft = Draft(channel, msg) if supports_drafts(channel) else None
        async with self._slots:
            typing = asyncio.create_task(self._keep_typing(msg))
            try:
                reply = await self.agent.respond(msg, draft.update if draft else None)
            except asyncio.CancelledError:
                log.info("turn_cancelled by=%s id=%s (nothing sent or saved)", msg.caller, msg.id)
                if draft is not None and draft.message_id is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.shield(draft.finish("(stopped)"))
                raise
            except Exception as exc:  # one bad turn must not take the agent down
                log.exception("turn_failed by=%s", msg.caller)
                reply = f"Sorry, that failed inside the agent ({type(exc).__name__}); see the logs."
            finally:
                typing.cancel()
        await self._send(msg, reply, draft)

    async def _keep_typing(self, msg: ChannelMessage) -> None:
        channel = self.channels.get(msg.channel)
        if channel is None:
            return
        while True:
            with contextlib.suppress(Exception):
                await channel.start_typing(msg.reply_target)
            await asyncio.sleep(TYPING_INTERVAL_SECONDS)

    async def _send(self, msg: ChannelMessage, reply: str | None, draft: Draft | None = None) -> None:
        if not reply:
            return
        reply = await self.hooks.sending(msg, reply) or ("(withheld)" if draft and draft.message_id else None)
        if not reply:
            return
        from edge.agent.outbound import deliver  # with the first reply: idle memory

        try:
            if draft is not None:
                await draft.finish(reply, self.delivery_base_delay)
            else:
                await deliver(self.channels[msg.channel], SendMessage(reply, msg.reply_target,
                                                                      msg.thread_id),
                              self.delivery_base_delay)
        except Exception:
            log.exception("delivery_failed channel=%s to=%s", msg.channel, msg.reply_target)

    async def drain(self) -> None:
        """Wait until every queued message has been handled and answered."""
        while True:
            await self.bus.join()
            await self.debouncer.flush_all()
            if not self._tasks:
                return
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
